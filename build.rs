//! Start-up cost of the binary, which hooks start on every message.
//!
//! - Link it as a fixed-position executable: a position-independent one
//!   spends a good part of its start-up in the dynamic loader relocating its
//!   tables (about as long as a turn's own work). Library code stays
//!   position-independent.
//! - Link the unwinder statically (what gcc's `-static-libgcc` does for C):
//!   each shared library the loader maps and relocates costs about 0.1 ms
//!   per process here, and `libgcc_s.so.1` serves only the unwinder. Rust's
//!   std asks for `-lgcc_s` by name, so a directory holding `libgcc_eh.a`
//!   under that name is searched first. Without `libgcc_eh.a` (another C
//!   toolchain), nothing changes.
use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let target = std::env::var("TARGET").unwrap_or_default();
    if !target.ends_with("linux-gnu") {
        return;
    }
    if target.starts_with("x86_64") {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
    if let Some(eh) = static_unwinder() {
        let dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
        let dir = dir.join("static-unwind");
        let lib = dir.join("libgcc_s.a");
        let _ = std::fs::remove_file(&lib);
        if std::fs::create_dir_all(&dir).is_ok() && std::fs::copy(&eh, &lib).is_ok() {
            println!("cargo:rustc-link-arg-bins=-L{}", dir.display());
        }
    }
}

/// `libgcc_eh.a` of the C compiler that links the binary, if it has one.
fn static_unwinder() -> Option<PathBuf> {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out = std::process::Command::new(cc)
        .arg("-print-file-name=libgcc_eh.a")
        .output()
        .ok()?;
    let path = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    // An unknown file name is echoed back as it was given.
    (out.status.success() && path.is_absolute() && Path::new(&path).is_file()).then_some(path)
}
