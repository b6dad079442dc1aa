//! The index encoder against gix's index writer, on one index file, for
//! `bench/commit_turn.py --compare-writer index`: the measured reason that
//! `git/index.rs` keeps its encoder (kept only while gix's writer is 1.5×
//! slower or more).
//!
//! Usage: `index_writer INDEX [ROUNDS]`. Each round writes the index once
//! with each writer, alternating, into a new file beside INDEX through the
//! 64 KiB buffer `prepare_index` uses; prints one JSON line with the
//! medians in milliseconds and their ratio.

use std::io::Write;
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let path = std::path::PathBuf::from(args.next().expect("usage: index_writer INDEX [ROUNDS]"));
    let rounds: usize = args
        .next()
        .map_or(40, |r| r.parse().expect("ROUNDS is a number"));
    let file = gix::index::File::at(&path, gix::hash::Kind::Sha1, false, Default::default())
        .expect("read the index");
    let out = path.with_extension("compare");
    let mut times = [Vec::new(), Vec::new()];
    for round in 0..rounds {
        for k in 0..2 {
            let with_gix = (round + k) % 2 == 1;
            let started = Instant::now();
            let f = std::fs::File::create(&out).expect("create");
            let mut w = std::io::BufWriter::with_capacity(64 * 1024, f);
            git_session::git::index::encode_for_comparison(&file, with_gix, &mut w).expect("write");
            w.flush().expect("write");
            drop(w);
            times[usize::from(with_gix)].push(started.elapsed().as_secs_f64() * 1e3);
        }
    }
    let _ = std::fs::remove_file(&out);
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let ours = median(&mut times[0]);
    let gix = median(&mut times[1]);
    println!(
        "{{\"entries\": {}, \"ours_ms\": {ours:.3}, \"gix_ms\": {gix:.3}, \"gix_over_ours\": {:.2}}}",
        file.entries().len(),
        gix / ours
    );
}
