# bash completion for familyctl(8)
_familyctl() {
    local cur prev verb
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    verb=""
    local word
    for word in "${COMP_WORDS[@]:1:COMP_CWORD-1}"; do
        case $word in
            authenticate|status|limits|set|revoke|graduate|forget|locks|requests|approve|deny|log|code|help|agent|monitors) verb=$word; break ;;
        esac
    done
    case $prev in
        --socket|--pam-dir|--config) COMPREPLY=($(compgen -f -- "$cur")); return ;;
        --user|--child) COMPREPLY=($(compgen -u -- "$cur")); return ;;
        --member) COMPREPLY=($(compgen -W "child individual" -- "$cur")); return ;;
        --at-end) COMPREPLY=($(compgen -W "lock end" -- "$cur")); return ;;
        --hours|--daily|--minutes) return ;;
        --since) COMPREPLY=($(compgen -W "today yesterday 1h 12h 7d" -- "$cur")); return ;;
        --app|--limit) return ;;
        -H|--host)
            # -H @FILE: a hosts file.
            if [[ $cur == @* ]]; then COMPREPLY=($(compgen -P @ -f -- "${cur#@}")); else COMPREPLY=($(compgen -A hostname -- "$cur")); fi
            return ;;
    esac
    case $verb in
        "") COMPREPLY=($(compgen -W "requests approve deny status limits set revoke graduate forget log locks authenticate code help agent monitors --socket -H --host --help --version" -- "$cur")) ;;
        requests) COMPREPLY=($(compgen -W "--watch --json" -- "$cur")) ;;
        approve) COMPREPLY=($(compgen -W "--minutes --stdin" -- "$cur")) ;;
        deny) COMPREPLY=($(compgen -W "--stdin" -- "$cur")) ;;
        limits)
            local sub=""
            for word in "${COMP_WORDS[@]:1:COMP_CWORD-1}"; do
                case $word in set|clear|more) sub=$word ;; esac
            done
            case $sub in
                set) COMPREPLY=($(compgen -W "--user --app --hours --daily --at-end --stdin" -- "$cur")) ;;
                clear) COMPREPLY=($(compgen -W "--user --app --stdin" -- "$cur")) ;;
                more) COMPREPLY=($(compgen -W "--user --minutes --stdin" -- "$cur")) ;;
                *) COMPREPLY=($(compgen -W "set clear more --user --json" -- "$cur")) ;;
            esac ;;
        agent) COMPREPLY=($(compgen -W "--if-guardian --config" -- "$cur")) ;;
        authenticate) COMPREPLY=($(compgen -W "--member --pam-dir --config --child --stdin" -- "$cur") $(compgen -u -- "$cur")) ;;
        status) COMPREPLY=($(compgen -W "--user --json" -- "$cur")) ;;
        set) COMPREPLY=($(compgen -W "--user --app --stdin approved denied" -- "$cur")) ;;
        revoke) COMPREPLY=($(compgen -W "--user --app --stdin" -- "$cur")) ;;
        graduate) COMPREPLY=($(compgen -u -- "$cur")) ;;
        forget) ;;
        locks) COMPREPLY=($(compgen -W "verify --no-repair" -- "$cur")) ;;
        code) COMPREPLY=($(compgen -W "enroll remove --stdin" -- "$cur")) ;;
        log) COMPREPLY=($(compgen -W "--user --app --since --limit --json" -- "$cur")) ;;
        monitors) COMPREPLY=($(compgen -W "--json" -- "$cur")) ;;
        help) COMPREPLY=($(compgen -W "requests approve deny status limits set revoke graduate forget log locks authenticate code agent monitors" -- "$cur")) ;;
    esac
}
complete -F _familyctl familyctl
