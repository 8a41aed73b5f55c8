# tincan.bash -- bash completion of tincan and tincan-link: commands, options (read from
# each command's own --help, so that they never drift from it) and the values they take.
# Installed as bash-completion/completions/tincan and .../tincan-link.

# _tincan_options CMD...: the long options that `CMD... --help` lists, one a line there.
_tincan_options() {
    "$@" --help 2>/dev/null | grep -oE -- '^ +--[a-z][a-z0-9-]*' | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u
}

# _tincan_value OPT: completes the value of an option that takes one; 1 if OPT takes none.
_tincan_value() {
    local cur=${COMP_WORDS[COMP_CWORD]}
    case $1 in
    --link-speed) mapfile -t COMPREPLY < <(compgen -W "modem isdn adsl lan auto" -- "$cur") ;;
    --log-level) mapfile -t COMPREPLY < <(compgen -W "error warn info debug" -- "$cur") ;;
    --profile) mapfile -t COMPREPLY < <(compgen -W "$(tincan-link --list-profiles 2>/dev/null | grep -oE '^[a-z0-9-]+')" -- "$cur") ;;
    --framing) mapfile -t COMPREPLY < <(compgen -W "none ppp" -- "$cur") ;;
    --secret-file|--xauthority|--screenshot|--stats-file|--ready-file|--info-file|--pcap|--socket|--trace*)
        mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
    --cache-dir) mapfile -t COMPREPLY < <(compgen -d -- "$cur") ;;
    --ssh|--remote-tincan) mapfile -t COMPREPLY < <(compgen -c -- "$cur") ;;
    --display) mapfile -t COMPREPLY < <(compgen -W ":0 :1" -- "$cur") ;;
    --compress|--max-memory|--lossy-images|--duration|--display-number|--link-listen|--link-connect|\
    --listen|--connect|--sockbuf|--mtu|--bits-per-byte|--overhead|--per-packet|--segment-overhead|--seed|\
    --addr-a|--addr-b|--rate*|--delay*|--jitter*|--loss*|--drop-list*|--queue*)
        COMPREPLY=() ;;
    *) return 1 ;;
    esac
    return 0
}

_tincan() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd=${COMP_WORDS[1]} i
    COMPREPLY=()
    if [ "$COMP_CWORD" -eq 1 ]; then
        mapfile -t COMPREPLY < <(compgen -W "ssh run app display info attach secret version help --help" -- "$cur")
        return 0
    fi
    # After `--` comes the program to run and its own arguments.
    for ((i = 2; i < COMP_CWORD; i++)); do
        if [ "${COMP_WORDS[i]}" = "--" ]; then
            if [ $((i + 1)) -eq "$COMP_CWORD" ]; then mapfile -t COMPREPLY < <(compgen -c -- "$cur")
            else mapfile -t COMPREPLY < <(compgen -f -- "$cur"); fi
            return 0
        fi
    done
    case $cmd in
    ssh|run|app|display|info|version) ;;
    secret) mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return 0 ;;
    *) return 0 ;;
    esac
    [ "$COMP_CWORD" -gt 2 ] && _tincan_value "$prev" && return 0
    if [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$(_tincan_options "${COMP_WORDS[0]}" "$cmd")" -- "$cur")
    elif [ "$cmd" = ssh ]; then
        # HOST: the known hosts, when bash-completion is there to list them.
        if declare -F _known_hosts_real >/dev/null; then _known_hosts_real -- "$cur"
        else mapfile -t COMPREPLY < <(compgen -A hostname -- "$cur"); fi
    fi
    return 0
}

_tincan_link() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    COMPREPLY=()
    if [ "$COMP_CWORD" -eq 1 ]; then
        mapfile -t COMPREPLY < <(compgen -W "stream packet --list-profiles --help" -- "$cur")
        return 0
    fi
    [ "$COMP_CWORD" -gt 1 ] && _tincan_value "$prev" && return 0
    local opts
    # --rate[-up|-down]: the option, and its two one-direction forms.
    opts=$("${COMP_WORDS[0]}" --help 2>/dev/null | grep -oE -- '--[a-z][a-z0-9-]*(\[-up\|-down\])?' |
        sed -E 's/^(.*)\[-up\|-down\]$/\1 \1-up \1-down/' | tr ' ' '\n' | sort -u)
    mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
    return 0
}

complete -F _tincan tincan
complete -F _tincan_link tincan-link
