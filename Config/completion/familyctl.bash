# bash completion for familyctl(8)
_familyctl() {
    local cur prev verb
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    verb=""
    local word
    for word in "${COMP_WORDS[@]:1:COMP_CWORD-1}"; do
        case $word in
            authenticate|status|set|revoke|graduate|locks) verb=$word; break ;;
        esac
    done
    case $prev in
        --socket|--pam-dir|--config) COMPREPLY=($(compgen -f -- "$cur")); return ;;
        --user|--child) COMPREPLY=($(compgen -u -- "$cur")); return ;;
        --member) COMPREPLY=($(compgen -W "child individual" -- "$cur")); return ;;
    esac
    case $verb in
        "") COMPREPLY=($(compgen -W "authenticate status set revoke graduate locks --socket --help --version" -- "$cur")) ;;
        authenticate) COMPREPLY=($(compgen -W "--member --pam-dir --config --child --stdin" -- "$cur") $(compgen -u -- "$cur")) ;;
        status) COMPREPLY=($(compgen -W "--user --json" -- "$cur")) ;;
        set) COMPREPLY=($(compgen -W "--user --app approved denied" -- "$cur")) ;;
        revoke) COMPREPLY=($(compgen -W "--user --app" -- "$cur")) ;;
        graduate) COMPREPLY=($(compgen -u -- "$cur")) ;;
        locks) COMPREPLY=($(compgen -W "verify --no-repair" -- "$cur")) ;;
    esac
}
complete -F _familyctl familyctl
