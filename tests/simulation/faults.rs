//! The faults a simulation injects below the engine: a TCP proxy that cuts or stalls the
//! PostgreSQL link, and a private PostgreSQL server the simulation restarts.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A TCP proxy to PostgreSQL that drops every live connection, or stalls, when its countdown
/// of forwarded messages (both directions) reaches zero: the point comes from the seed.
pub struct Proxy {
    pub port: u16,
    cut_in: Arc<AtomicI64>,
    stall_in: Arc<AtomicI64>,
    pub cuts: Arc<AtomicU64>,
    generation: Arc<tokio::sync::watch::Sender<u64>>,
    task: tokio::task::JoinHandle<()>,
}

impl Proxy {
    pub async fn start(upstream: String) -> Proxy {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let link = Link {
            cut_in: Arc::new(AtomicI64::new(0)),
            stall_in: Arc::new(AtomicI64::new(0)),
            cuts: Arc::new(AtomicU64::new(0)),
            generation: Arc::new(tokio::sync::watch::channel(0u64).0),
        };
        let each = link.clone();
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let Ok(server) = tokio::net::TcpStream::connect(&upstream).await else {
                    continue;
                };
                tokio::spawn(each.clone().run(client, server));
            }
        });
        Proxy {
            port,
            cut_in: link.cut_in,
            stall_in: link.stall_in,
            cuts: link.cuts,
            generation: link.generation,
            task,
        }
    }

    /// Cuts every connection at the `n`th message forwarded from now (that message is lost).
    pub fn cut_after(&self, n: i64) {
        self.cut_in.store(n, Ordering::SeqCst);
    }

    pub fn stall_after(&self, n: i64) {
        self.stall_in.store(n, Ordering::SeqCst);
    }

    pub fn disarm(&self) {
        self.cut_in.store(0, Ordering::SeqCst);
        self.stall_in.store(0, Ordering::SeqCst);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
        self.generation.send_modify(|g| *g += 1);
    }
}

#[derive(Clone)]
struct Link {
    cut_in: Arc<AtomicI64>,
    stall_in: Arc<AtomicI64>,
    pub cuts: Arc<AtomicU64>,
    generation: Arc<tokio::sync::watch::Sender<u64>>,
}

impl Link {
    async fn run(self, client: tokio::net::TcpStream, server: tokio::net::TcpStream) {
        let (cr, cw) = client.into_split();
        let (sr, sw) = server.into_split();
        let mut cut = self.generation.subscribe();
        // Whichever direction ends first ends the connection: both halves are dropped.
        tokio::select! {
            _ = self.clone().pump(cr, sw) => {}
            _ = self.clone().pump(sr, cw) => {}
            _ = cut.changed() => {}
        }
    }

    async fn pump(
        self,
        mut from: tokio::net::tcp::OwnedReadHalf,
        mut to: tokio::net::tcp::OwnedWriteHalf,
    ) {
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            let n = match from.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            if self.stall_in.fetch_sub(1, Ordering::SeqCst) == 1 {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            if self.cut_in.fetch_sub(1, Ordering::SeqCst) == 1 {
                self.cuts.fetch_add(1, Ordering::SeqCst);
                self.generation.send_modify(|g| *g += 1);
                return;
            }
            if to.write_all(&buf[..n]).await.is_err() {
                return;
            }
        }
    }
}

/// A PostgreSQL server of the simulation's own (initdb into a temporary directory, a free
/// port), so that it can be restarted without disturbing the other tests' server. A restart
/// is `pg_ctl restart -m immediate`: every backend dies mid-statement, and the server comes
/// back through crash recovery, as after a power cut. The binaries are found under
/// `/usr/lib/postgresql/*/bin` or `GPUBILL_TEST_PG_BIN`; without them the test fails loudly.
pub struct PrivatePostgres {
    dir: std::path::PathBuf,
    bin: std::path::PathBuf,
    pub port: u16,
    pub restarts: AtomicU64,
}

impl PrivatePostgres {
    pub fn start() -> PrivatePostgres {
        let bin = pg_bin();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let dir =
            std::env::temp_dir().join(format!("gpubill-sim-pg-{}-{port}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let pg = PrivatePostgres {
            dir,
            bin,
            port,
            restarts: AtomicU64::new(0),
        };
        if as_root() {
            run(std::process::Command::new("chown")
                .arg("postgres")
                .arg(&pg.dir));
        }
        run(pg
            .command("initdb")
            .args(["-A", "trust", "-U", "postgres", "--no-sync", "-D"])
            .arg(pg.dir.join("data")));
        run(&mut pg.ctl(&["start"]));
        pg
    }

    /// `postgres://` URL of the server (database `postgres`).
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}", self.port)
    }

    /// Crash and restart the server; returns once it accepts connections again.
    pub fn restart(&self) {
        run(&mut self.ctl(&["-m", "immediate", "restart"]));
        self.restarts.fetch_add(1, Ordering::SeqCst);
    }

    fn ctl(&self, what: &[&str]) -> std::process::Command {
        let mut c = self.command("pg_ctl");
        c.arg("-D")
            .arg(self.dir.join("data"))
            .arg("-w")
            .arg("-l")
            .arg(self.dir.join("log"))
            .arg("-o")
            .arg(format!(
                "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200",
                self.port,
                self.dir.display()
            ))
            .args(what);
        c
    }

    fn command(&self, program: &str) -> std::process::Command {
        let path = self.bin.join(program);
        if as_root() {
            // PostgreSQL refuses to run as root.
            let mut c = std::process::Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(path);
            c
        } else {
            std::process::Command::new(path)
        }
    }
}

impl Drop for PrivatePostgres {
    fn drop(&mut self) {
        let _ = self
            .ctl(&["-m", "immediate", "stop"])
            .stdout(std::process::Stdio::null())
            .status();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn as_root() -> bool {
    std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"0")
}

fn pg_bin() -> std::path::PathBuf {
    if let Some(p) = std::env::var_os("GPUBILL_TEST_PG_BIN") {
        return p.into();
    }
    let mut found: Vec<std::path::PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|p| p.join("pg_ctl").exists())
        .collect();
    found.sort();
    found.pop().expect(
        "no PostgreSQL server binaries (initdb, pg_ctl) under /usr/lib/postgresql/*/bin: \
         ./scripts/services.sh postgres installs them, or set GPUBILL_TEST_PG_BIN",
    )
}

fn run(c: &mut std::process::Command) {
    let out = c.output().unwrap_or_else(|e| panic!("{c:?}: {e}"));
    assert!(
        out.status.success(),
        "{c:?}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
