//! The part of each completion script that asks `git-session __complete`
//! for the words the state dir holds, and leaves the rest to the script
//! clap_complete generates from the definitions.

/// bash: a function that asks first and falls back to clap's
/// `_git__session`, registered in its place.
const BASH: &str = r#"
# Session ids, project ids, branch names and remotes come from the state dir:
# `git-session __complete` names them (it reads index.json, projects.json,
# remotes.json and a session's refs, and writes nothing); anything else is
# completed as above.
_git__session_dynamic() {
    local prog="${COMP_WORDS[0]/#\~/$HOME}" out
    if out="$("$prog" __complete --shell bash --index "$COMP_CWORD" -- "${COMP_WORDS[@]}" 2>/dev/null)"; then
        local IFS=$'\n'
        COMPREPLY=($out)
        compopt +o default +o bashdefault 2>/dev/null
        return 0
    fi
    _git__session "$@"
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _git__session_dynamic -o nosort -o bashdefault -o default git-session
else
    complete -F _git__session_dynamic -o bashdefault -o default git-session
fi
"#;

/// How clap_complete 4.6 spells the `case` arms of a subcommand's
/// options in bash for a program name with a hyphen
/// (`git__subcmd__session__subcmd__log)`), where its loop spells the
/// state `git__session__subcmd__log`: no arm matched, and no option of a
/// subcommand completed (clap-rs/clap#6421). The arms are spelled as the
/// loop spells them.
const CLAP_BASH_ARM: &str = "git__subcmd__session__";

/// The end of clap's zsh script: it calls or registers `_git-session`.
const ZSH_END: &str = r#"if [ "$funcstack[1]" = "_git-session" ]; then
    _git-session "$@"
else
    compdef _git-session git-session
fi
"#;

/// zsh: a function that asks first and falls back to clap's
/// `_git-session`, called and registered in its place.
const ZSH: &str = r#"# Session ids, project ids, branch names and remotes come from the state dir:
# `git-session __complete` names them (it reads index.json, projects.json,
# remotes.json and a session's refs, and writes nothing); anything else is
# completed as above.
_git-session_dynamic() {
    local out
    if out="$(${~words[1]} __complete --shell zsh --index $((CURRENT - 1)) -- "${words[@]}" 2>/dev/null)"; then
        local -a candidates
        candidates=(${(f)out})
        compset -P '*='
        _describe -t values 'value' candidates
        return
    fi
    _git-session "$@"
}

compdef _git-session_dynamic git-session
if [ "$funcstack[1]" = "_git-session" ]; then
    _git-session_dynamic "$@"
fi
"#;

/// fish: a completion for the words `__complete` answers for (no file
/// names there), from what it prints.
const FISH: &str = r#"
# Session ids, project ids, branch names and remotes come from the state dir:
# `git-session __complete` names them (it reads index.json, projects.json,
# remotes.json and a session's refs, and writes nothing).
function __fish_git_session_dynamic
    set -l before (commandline -opc)
    command $before[1] __complete --shell fish --index (count $before) -- $before (commandline -ct) 2>/dev/null
end
complete -c git-session -f -n '__fish_git_session_dynamic >/dev/null' -a '(__fish_git_session_dynamic)'
"#;

/// clap_complete's `script` for `shell` with the dynamic part added.
pub fn with_dynamic(shell: clap_complete::Shell, script: Vec<u8>) -> Vec<u8> {
    use clap_complete::Shell;
    let mut text = String::from_utf8(script).expect("clap_complete writes UTF-8");
    match shell {
        Shell::Bash => {
            text = text.replace(CLAP_BASH_ARM, "git__session__");
            text.push_str(BASH);
        }
        Shell::Zsh => match text.strip_suffix(ZSH_END) {
            Some(head) => text = format!("{head}{ZSH}"),
            None => text.push_str(ZSH),
        },
        Shell::Fish => text.push_str(FISH),
        _ => {}
    }
    text.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each script asks `__complete` and falls back to clap's function,
    /// which it registers in clap's place (zsh: clap's own ending is gone,
    /// not left to register it again).
    #[test]
    fn each_script_asks_first_and_registers_the_asking_function() {
        let scripts = crate::commands::man::scripts();
        let text = |name: &str| {
            let (_, s) = scripts.iter().find(|(n, _)| *n == name).expect("listed");
            String::from_utf8(s.clone()).expect("utf-8")
        };
        let bash = text("git-session.bash");
        assert!(bash.ends_with(BASH) && bash.contains("_git__session() {"));
        // Every state the loop reaches has its arm (clap-rs/clap#6421).
        assert!(!bash.contains(CLAP_BASH_ARM));
        for state in bash.split("cmd=\"").skip(1) {
            let state = state.split('"').next().expect("quoted");
            if state.is_empty() {
                continue;
            }
            assert!(bash.contains(&format!("\n        {state})\n")), "{state}");
        }
        let zsh = text("_git-session");
        assert!(zsh.ends_with(ZSH) && !zsh.contains(ZSH_END), "{zsh}");
        let fish = text("git-session.fish");
        assert!(fish.ends_with(FISH));
        for s in [&bash, &zsh, &fish] {
            assert!(s.contains("__complete --shell "));
        }
    }
}
