//! Fuzzing the readers (issue 9): arbitrary bytes and mutated valid inputs
//! never make a reader panic; what parses, round-trips.

use git_session::layout::paths::parse_node_file_name;
use git_session::layout::schema::{Meta, Node, preview};
use git_session::session::{Trailers, title_from_text};
use proptest::prelude::*;

const NODE: &str = r#"{"id":"u1_reply","created_at":1796017556.5,"seq":2,"role":"llm","name":"m1","input":null,"output":"hi there","caller":"","predecessor":"u1","reads":[],"metadata":{"status":"completed"}}"#;
const META: &str = r#"{"id":"s1","agent_id":"main","title":"Hello","created_at":1796017556.44,"head_id":"u1_reply","branches":{"u1_reply":{"name":"b"}}}"#;

/// A valid input with a few bytes flipped, cut or duplicated.
fn mutated(base: &'static str) -> impl Strategy<Value = Vec<u8>> {
    (
        proptest::collection::vec((0..base.len(), any::<u8>()), 0..6),
        0..=base.len(),
    )
        .prop_map(move |(edits, cut)| {
            let mut b = base.as_bytes().to_vec();
            for (i, v) in edits {
                b[i] = v;
            }
            b.truncate(cut.max(1));
            b
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn node_parser_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = Node::parse(&bytes);
    }

    #[test]
    fn mutated_nodes_never_panic_and_valid_ones_round_trip(bytes in mutated(NODE)) {
        if let Ok(n) = Node::parse(&bytes) {
            let again = Node::parse(&n.to_json()).expect("a node we wrote parses");
            prop_assert_eq!(again, n.clone());
            let _ = (n.letter(), n.starts_turn(), n.text());
        }
    }

    #[test]
    fn meta_parser_never_panics(bytes in mutated(META)) {
        if let Ok(m) = Meta::parse(&bytes) {
            let again = Meta::parse(&m.to_json()).expect("meta we wrote parses");
            prop_assert_eq!(again, m.clone());
            let _ = (m.head_id(), m.title(), m.status());
        }
    }

    #[test]
    fn file_names_never_panic(name in "\\PC{0,40}") {
        if let Some((seq, letter, id)) = parse_node_file_name(&name) {
            prop_assert!(!id.is_empty() && "ulcatsx".contains(letter));
            let _ = seq;
        }
    }

    #[test]
    fn trailers_and_titles_never_panic(msg in "\\PC{0,300}") {
        let t = Trailers::parse(&msg);
        if let Some((a, b)) = t.nodes {
            let _ = t.holds_seq(a.saturating_add(b) / 2);
        }
        let title = title_from_text(&msg);
        prop_assert!(title.chars().count() <= 51);
        prop_assert!(preview(&msg).chars().count() <= 80);
    }

    #[test]
    fn registry_readers_never_panic(
        index in mutated(r#"{"s1":{"id":"s1","status":"idle","title":"t","updated_at":1.5,"preview":"p"}}"#),
        journal in proptest::collection::vec(any::<u8>(), 0..200),
        locations in mutated(r#"{"s1":"/tmp/x"}"#),
        projects in mutated(r#"{"proj_1":{"id":"proj_1","path":"/tmp","session_ids":["s1"]}}"#),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let state = git_session::layout::StateDir { root: dir.path().to_path_buf() };
        std::fs::create_dir_all(state.sessions()).unwrap();
        std::fs::create_dir_all(dir.path().join("projects")).unwrap();
        std::fs::write(state.index_json(), &index).unwrap();
        std::fs::write(state.index_journal(), &journal).unwrap();
        std::fs::write(state.locations_json(), &locations).unwrap();
        std::fs::write(state.projects_json(), &projects).unwrap();
        let _ = git_session::layout::registry::load_index(&state);
        let _ = git_session::layout::registry::load_list(&state, &mut Default::default());
        let _ = git_session::layout::registry::read_locations(&state);
        let _ = git_session::layout::projects::read(&state);
    }
}
