//! Start-up cost of the binary, which hooks start on every message.
//!
//! On Linux with glibc, `.cargo/config.toml` builds a static binary at a
//! fixed position: no loader, no shared library, no relocation. When those
//! flags are overridden (`RUSTFLAGS` replaces them), this script gets the
//! dynamic build as close as it can:
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
//!
//! In both builds:
//! - Place the functions hooks run first and together
//!   (`link/hot-functions.txt`, made by `bench/hot_functions.py`): a
//!   process faults its code in 64 KiB at a time, and spread over the whole
//!   binary that is about 60 faults per `commit-turn`. Only a linker that
//!   accepts `--symbol-ordering-file` (LLD, Rust's default here since 1.90)
//!   gets the list; names it does not find are skipped.
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const HOT: &str = "link/hot-functions.txt";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed={HOT}");
    let target = std::env::var("TARGET").unwrap_or_default();
    if !target.ends_with("linux-gnu") {
        return;
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    // A static build (`.cargo/config.toml`) has neither a loader nor shared
    // libraries: rustc links it at a fixed position with the unwinder inside.
    let features = std::env::var("CARGO_CFG_TARGET_FEATURE").unwrap_or_default();
    let dynamic = !features.split(',').any(|f| f == "crt-static");
    if dynamic && target.starts_with("x86_64") {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
    // The host's `cc` knows the host's libgcc only: not when cross-compiling.
    let native = std::env::var("HOST").is_ok_and(|h| h == target);
    if dynamic
        && native
        && let Some(eh) = static_unwinder()
    {
        let dir = out.join("static-unwind");
        let lib = dir.join("libgcc_s.a");
        let _ = std::fs::remove_file(&lib);
        if std::fs::create_dir_all(&dir).is_ok() && std::fs::copy(&eh, &lib).is_ok() {
            println!("cargo:rustc-link-arg-bins=-L{}", dir.display());
        }
    }
    // At run time, not `env!`: a build script compiled for one checkout is
    // reused for another that shares the target directory.
    let manifest_dir =
        std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let hot = Path::new(&manifest_dir).join(HOT);
    let ordering = [
        format!("-Wl,--symbol-ordering-file={}", hot.display()),
        "-Wl,--no-warn-symbol-ordering".to_string(),
    ];
    if hot.is_file() && linker_accepts(&target, &out, &ordering) {
        for arg in ordering {
            println!("cargo:rustc-link-arg-bins={arg}");
        }
    }
}

/// `libgcc_eh.a` of the C compiler that links the binary, if it has one.
fn static_unwinder() -> Option<PathBuf> {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out = Command::new(cc)
        .arg("-print-file-name=libgcc_eh.a")
        .output()
        .ok()?;
    let path = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    // An unknown file name is echoed back as it was given.
    (out.status.success() && path.is_absolute() && path.is_file()).then_some(path)
}

/// Whether a program linked the way cargo links this one (same compiler,
/// target, linker and flags) links with `args` added.
fn linker_accepts(target: &str, out: &Path, args: &[String]) -> bool {
    let src = out.join("probe.rs");
    if std::fs::write(&src, "fn main() {}\n").is_err() {
        return false;
    }
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let mut cmd = Command::new(rustc);
    cmd.args([
        "--edition=2021",
        "--crate-type=bin",
        "--target",
        target,
        "-o",
    ])
    .arg(out.join("probe"))
    .arg(&src);
    if let Ok(flags) = std::env::var("CARGO_ENCODED_RUSTFLAGS") {
        cmd.args(flags.split('\x1f').filter(|f| !f.is_empty()));
    }
    if let Ok(linker) = std::env::var("RUSTC_LINKER") {
        cmd.arg(format!("-Clinker={linker}"));
    }
    for a in args {
        cmd.arg(format!("-Clink-arg={a}"));
    }
    cmd.stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
