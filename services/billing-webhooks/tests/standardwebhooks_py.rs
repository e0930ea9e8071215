//! Every delivery verified by a verifier nobody here wrote: the Standard Webhooks reference
//! library for Python (`standardwebhooks` on PyPI, pinned by tests/requirements.txt) in
//! tests/receiver.py, before, during and after a secret rotation.
//!
//! Needs python3 with venv and pip, and PyPI the first time: the venv is made in
//! `~/.cache/gpubill/venv-webhooks` when missing or when the requirements changed (as
//! `scripts/services.sh python-tools` does). Without python3 the test fails, saying so.

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use billing_webhooks::clock::{Clock, SplitMix64, SystemClock};
use billing_webhooks::deliver::Worker;
use billing_webhooks::memory::MemoryOutbox;
use billing_webhooks::outbox::EndpointId;
use billing_webhooks::sign::{PreviousSecret, Secret, SigningSecrets};
use common::{endpoint, loopback_allowed};

const CRATE_DIR: &str = env!("CARGO_MANIFEST_DIR");

fn run(command: &mut Command, what: &str) {
    let output = command
        .output()
        .unwrap_or_else(|error| panic!("{what}: cannot run {command:?}: {error}"));
    assert!(
        output.status.success(),
        "{what} failed ({}): {command:?}\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The venv with the pinned `standardwebhooks`, made when missing or out of date.
fn venv_python() -> PathBuf {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".cache")))
        .expect("neither XDG_CACHE_HOME nor HOME is set: nowhere to put the webhooks venv");
    let venv = cache.join("gpubill/venv-webhooks");
    let python = venv.join("bin/python");
    let requirements = Path::new(CRATE_DIR).join("tests/requirements.txt");
    let wanted = sha256_hex(&std::fs::read(&requirements).expect("tests/requirements.txt"));
    // The stamp scripts/services.sh writes too: `sha256sum` of the requirements.
    let stamp = venv.join(".requirements.sha256");
    let made = std::fs::read_to_string(&stamp).unwrap_or_default();
    if python.exists() && made.trim() == wanted {
        return python;
    }
    let found = Command::new("python3").arg("--version").output();
    assert!(
        found.as_ref().is_ok_and(|output| output.status.success()),
        "python3 is needed to verify webhooks with the `standardwebhooks` package (PyPI) and \
         does not run ({found:?}); install it (Debian: apt-get install python3 python3-venv) or \
         run scripts/services.sh python-tools"
    );
    let _ = std::fs::remove_dir_all(&venv);
    run(
        Command::new("python3").arg("-m").arg("venv").arg(&venv),
        "making the webhooks venv (Debian: apt-get install python3-venv)",
    );
    run(
        Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "-r",
            ])
            .arg(&requirements),
        "installing standardwebhooks from PyPI into the venv (pip, network)",
    );
    std::fs::write(&stamp, format!("{wanted}\n")).expect("writing the venv's stamp");
    python
}

/// receiver.py, killed when dropped, and the lines it prints.
struct PyReceiver {
    child: Child,
    lines: Receiver<String>,
    url: String,
}

impl Drop for PyReceiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl PyReceiver {
    fn start(secrets: &[(&str, &Secret)]) -> PyReceiver {
        let mut command = Command::new(venv_python());
        command.arg(Path::new(CRATE_DIR).join("tests/receiver.py"));
        for (label, secret) in secrets {
            command
                .arg("--secret")
                .arg(format!("{label}={}", secret.expose_whsec()));
        }
        let mut child = command
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|error| panic!("starting {command:?}: {error}"));
        let stdout = child.stdout.take().expect("piped stdout");
        let (sender, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = sender.send(line);
            }
        });
        let mut receiver = PyReceiver {
            child,
            lines,
            url: String::new(),
        };
        let first = receiver.next_line();
        let port = first
            .strip_prefix("listening ")
            .unwrap_or_else(|| panic!("receiver.py said {first:?}"));
        receiver.url = format!("http://127.0.0.1:{port}/hook");
        receiver
    }

    fn next_line(&self) -> String {
        self.lines
            .recv_timeout(Duration::from_secs(20))
            .expect("receiver.py printed nothing for 20 s (see its stderr above)")
    }

    fn next_delivery(&self) -> serde_json::Value {
        let line = self.next_line();
        serde_json::from_str(&line).unwrap_or_else(|error| panic!("{line:?}: {error}"))
    }
}

#[tokio::test]
async fn the_standardwebhooks_package_verifies_every_delivery_across_a_rotation() {
    let old = Secret::generate().expect("a secret");
    let new = Secret::generate().expect("a secret");
    let receiver = PyReceiver::start(&[("old", &old), ("new", &new)]);
    let clock: Arc<SystemClock> = Arc::new(SystemClock);
    let now_ms = clock.now_ms();
    let outbox = Arc::new(MemoryOutbox::new());
    let rotating = EndpointId("ep_rotating".into());
    outbox.add_endpoint(
        endpoint("ep_rotating", Some("acct_1"), &receiver.url, old.clone()),
        now_ms,
    );
    // Rotated from old to new two hours ago with one hour of overlap: only new signs.
    let mut expired = endpoint("ep_expired", Some("acct_2"), &receiver.url, new.clone());
    expired.secrets = SigningSecrets {
        current: new.clone(),
        previous: Some(PreviousSecret {
            secret: old.clone(),
            expires_at_ms: now_ms - 3_600_000,
        }),
    };
    outbox.add_endpoint(expired, now_ms);
    let worker = Worker::new(
        Arc::clone(&outbox),
        clock.clone(),
        Box::new(SplitMix64::new(1)),
        loopback_allowed(),
    )
    .expect("the worker builds");
    let body = r#"{"type":"wallet.low_balance","data":{"account":"acct_1","hours_left":"3.5","note":"余额可用约 3 小时"}}"#;

    // Before the rotation: one signature, by the old secret.
    outbox.publish(Some("acct_1"), "wallet.low_balance", body, clock.now_ms());
    assert_eq!(worker.tick().await.expect("tick").delivered, 1);
    let before = receiver.next_delivery();
    assert_eq!(before["id"], "msg_1");
    assert_eq!(
        before["verified_by"],
        serde_json::json!(["old"]),
        "{before}"
    );
    assert_eq!(before["signatures"], 1);
    assert_eq!(before["content_type"], "application/json");
    assert_eq!(before["body"]["data"]["note"], "余额可用约 3 小时");

    // During the rotation: two signatures, each secret verifies alone.
    outbox
        .rotate_secret(&rotating, new.clone(), clock.now_ms(), 3_600_000)
        .expect("rotate");
    outbox.publish(Some("acct_1"), "wallet.low_balance", body, clock.now_ms());
    assert_eq!(worker.tick().await.expect("tick").delivered, 1);
    let during = receiver.next_delivery();
    assert_eq!(during["id"], "msg_2");
    assert_eq!(
        during["verified_by"],
        serde_json::json!(["old", "new"]),
        "{during}"
    );
    assert_eq!(during["signatures"], 2);

    // After the overlap: the old secret no longer verifies.
    outbox.publish(Some("acct_2"), "wallet.low_balance", body, clock.now_ms());
    assert_eq!(worker.tick().await.expect("tick").delivered, 1);
    let after = receiver.next_delivery();
    assert_eq!(after["id"], "msg_3");
    assert_eq!(after["verified_by"], serde_json::json!(["new"]), "{after}");
    assert!(
        after["errors"]["old"]
            .as_str()
            .is_some_and(|e| e.contains("No matching signature")),
        "{after}"
    );
}
