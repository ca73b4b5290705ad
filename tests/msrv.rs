//! The declared minimum Rust version (`rust-version` in Cargo.toml) is at least the one every
//! dependency declares (as resolved in Cargo.lock, for every feature): a lower one would promise
//! a build that cannot happen. Newer std APIs in cubeprim's own code are caught by clippy's
//! `incompatible_msrv` lint, which reads the same field.

use std::process::Command;

/// `1.92` → `(1, 92, 0)`.
fn version(v: &str) -> (u32, u32, u32) {
    let mut it = v.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    (
        it.next().unwrap_or(0),
        it.next().unwrap_or(0),
        it.next().unwrap_or(0),
    )
}

#[test]
fn declared_msrv_covers_every_dependency() {
    if !std::path::Path::new(env!("CARGO")).exists() {
        // A test binary carried to a machine without the toolchain (the GPU runs).
        eprintln!("msrv: no cargo at {}; not checked", env!("CARGO"));
        return;
    }
    // Offline first; where a feature's crates were never downloaded (a build without
    // `candle-cuda` has no `candle-kernels`), cargo fetches them.
    let metadata = |offline: bool| {
        let mut cmd = Command::new(env!("CARGO"));
        cmd.args(["metadata", "--format-version", "1", "--all-features"]);
        if offline {
            cmd.arg("--offline");
        }
        cmd.arg("--manifest-path")
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"))
            .output()
            .expect("cargo metadata runs")
    };
    let mut out = metadata(true);
    if !out.status.success() {
        out = metadata(false);
    }
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata JSON");
    let packages = meta["packages"].as_array().expect("packages");
    let ours = packages
        .iter()
        .find(|p| p["name"] == "cubeprim")
        .and_then(|p| p["rust_version"].as_str())
        .expect("cubeprim declares a rust-version");
    let mut higher = Vec::new();
    for p in packages {
        if let Some(v) = p["rust_version"].as_str() {
            if version(v) > version(ours) {
                higher.push(format!("{} {} needs {v}", p["name"], p["version"]));
            }
        }
    }
    assert!(
        higher.is_empty(),
        "rust-version {ours} is below what dependencies declare: {}",
        higher.join(", ")
    );
    assert!(version("1.92") < version("1.95") && version("1.92.1") > version("1.92"));
}
