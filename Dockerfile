# gpubill: one binary, roles as subcommands. The benchmark and load tools (`gpubill-bench`,
# services/gpubill-bench) are not built into the production image.
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --locked --profile dist -p gpubill && cp target/dist/gpubill /usr/local/bin/gpubill

FROM debian:bookworm-slim
RUN useradd --system --uid 10001 gpubill && mkdir -p /var/lib/gpubill && chown gpubill /var/lib/gpubill
COPY --from=build /usr/local/bin/gpubill /usr/local/bin/gpubill
COPY examples /examples
USER gpubill
ENTRYPOINT ["gpubill"]
EXPOSE 8080
CMD ["serve", "--listen", "0.0.0.0:8080", "--data-dir", "/var/lib/gpubill"]
