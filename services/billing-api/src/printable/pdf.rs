//! PDF through headless Chromium (see `printable.rs`).

use crate::error::ApiError;
use std::path::{Path as FsPath, PathBuf};
use std::time::Duration;

/// Longest wait for one PDF: for a free rendering slot, then for Chromium to print. A page
/// prints in about a second; a Chromium still running after this is stuck and is killed.
pub const PDF_TIMEOUT_SECONDS: u64 = 30;
/// Most Chromiums printing at once (each takes a few hundred MB of memory).
pub const PDF_RENDERS_MAX: usize = 2;

/// Chromium's binary: `GPUBILL_CHROMIUM` when set (a path or a name on `PATH`), else the first
/// of `chromium`, `chromium-browser`, `google-chrome` found on `PATH`.
pub fn chromium() -> Option<PathBuf> {
    if let Some(c) = std::env::var_os("GPUBILL_CHROMIUM").filter(|c| !c.is_empty()) {
        return find_program(&PathBuf::from(c));
    }
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|n| find_program(FsPath::new(n)))
}

pub(super) fn is_executable(p: &FsPath) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `name` itself when it is a path, else its first executable on `PATH`.
pub(super) fn find_program(name: &FsPath) -> Option<PathBuf> {
    if name.components().count() > 1 {
        return is_executable(name).then(|| name.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))
}

pub(super) static RENDERS: tokio::sync::Semaphore =
    tokio::sync::Semaphore::const_new(PDF_RENDERS_MAX);

/// Prints `html` to an A4 PDF with headless Chromium (see the module header).
pub async fn print_to_pdf(html: &str) -> Result<Vec<u8>, ApiError> {
    print_with(chromium(), html).await
}

pub(super) async fn print_with(bin: Option<PathBuf>, html: &str) -> Result<Vec<u8>, ApiError> {
    let Some(bin) = bin else {
        return Err(ApiError::Unavailable(
            "PDF needs Chromium, which is not installed on this server: install it (Debian: \
             apt-get install chromium) or set GPUBILL_CHROMIUM to its path; the .html form \
             works without it"
                .into(),
        ));
    };
    let limit = Duration::from_secs(PDF_TIMEOUT_SECONDS);
    let _permit = tokio::time::timeout(limit, RENDERS.acquire())
        .await
        .map_err(|_| {
            ApiError::Unavailable(format!(
                "{PDF_RENDERS_MAX} PDFs are being printed; retry in a few seconds"
            ))
        })?
        .map_err(|e| ApiError::Internal(format!("PDF semaphore: {e}")))?;
    let dir =
        std::env::temp_dir().join(format!("gpubill-pdf-{}", crate::auth::generate_secret("")));
    let result = print_in(&bin, &dir, html, limit).await;
    let _ = tokio::fs::remove_dir_all(&dir).await;
    result
}

pub(super) async fn print_in(
    bin: &FsPath,
    dir: &FsPath,
    html: &str,
    limit: Duration,
) -> Result<Vec<u8>, ApiError> {
    let io = |what: &str, e: std::io::Error| ApiError::Internal(format!("PDF: {what}: {e}"));
    tokio::fs::create_dir_all(dir)
        .await
        .map_err(|e| io("temporary directory", e))?;
    let page = dir.join("invoice.html");
    let out = dir.join("invoice.pdf");
    tokio::fs::write(&page, html)
        .await
        .map_err(|e| io("write the page", e))?;
    let mut cmd = tokio::process::Command::new(bin);
    cmd.arg("--headless")
        .arg("--no-sandbox")
        .arg("--disable-gpu")
        .arg("--disable-dev-shm-usage")
        .arg("--no-first-run")
        .arg("--no-pdf-header-footer")
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .arg(format!("--print-to-pdf={}", out.display()))
        .arg(format!("file://{}", page.display()))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let child = cmd
        .spawn()
        .map_err(|e| io(&format!("start {}", bin.display()), e))?;
    let output = tokio::time::timeout(limit, child.wait_with_output())
        .await
        .map_err(|_| {
            ApiError::Unavailable(format!(
                "Chromium did not print the PDF within {PDF_TIMEOUT_SECONDS} s; retry"
            ))
        })?
        .map_err(|e| io("wait for Chromium", e))?;
    let pdf = tokio::fs::read(&out).await.unwrap_or_default();
    if !output.status.success() || !pdf.starts_with(b"%PDF") {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let tail: String = stderr.lines().rev().take(5).collect::<Vec<_>>().join(" | ");
        return Err(ApiError::Internal(format!(
            "Chromium ({}) exited with {} and {} bytes of PDF: {tail}",
            bin.display(),
            output.status,
            pdf.len()
        )));
    }
    Ok(pdf)
}
