//! Stamps the module with a digest of the engine's source (`INCAST_ENGINE_SOURCE`), so
//! that `engine_build()` names the exact engine a result came from: the sweep cache keys
//! its points on it, and a checkout that changes the engine without changing the crate
//! version no longer reads the points an older engine computed.
//!
//! The digest is 64-bit FNV-1a over every file's path (relative to the crate holding
//! it) and bytes, in path order, of the engine crate's and this crate's `src` trees and
//! manifests. It is an identity, not a guard: the cache's MAC guards against edits.

use std::fs;
use std::path::{Path, PathBuf};

/// The trees and files whose contents decide what a run computes.
const SOURCES: [&str; 4] = ["../incast-sim/src", "../incast-sim/Cargo.toml", "src", "Cargo.toml"];

fn main() {
    let mut files = Vec::new();
    for source in SOURCES {
        println!("cargo:rerun-if-changed={source}");
        collect(Path::new(source), &mut files);
    }
    files.sort();
    let mut hash = Fnv1a::new();
    for file in &files {
        hash.write(file.to_string_lossy().as_bytes());
        hash.write(&[0]);
        hash.write(&fs::read(file).unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display())));
        hash.write(&[0]);
    }
    println!("cargo:rustc-env=INCAST_ENGINE_SOURCE={:016x}", hash.0);
}

/// Every regular file under `path` (or `path` itself when it is one).
fn collect(path: &Path, files: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let entries = fs::read_dir(path).unwrap_or_else(|e| panic!("cannot list {}: {e}", path.display()));
        for entry in entries {
            collect(&entry.expect("a directory entry").path(), files);
        }
    } else if path.is_file() {
        files.push(path.to_path_buf());
    }
}

/// FNV-1a, 64-bit (Fowler, Noll, Vo; draft-eastlake-fnv).
struct Fnv1a(u64);

impl Fnv1a {
    fn new() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}
