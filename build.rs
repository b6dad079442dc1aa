//! Link the binary as a fixed-position executable: hooks start it on every
//! message, and a position-independent one spends a good part of its start-up
//! in the dynamic loader relocating its tables (about as long as a turn's
//! own work). Library code stays position-independent.
fn main() {
    let target = std::env::var("TARGET").unwrap_or_default();
    if target.starts_with("x86_64") && target.ends_with("linux-gnu") {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
