# What the bench scripts share; sourced, not run.

# bench_mode LAST ARGS...: MODE=full, or smoke for --smoke; --help prints the
# script's head comment (lines 2 to LAST); anything else is a usage error.
bench_mode() {
    local last=$1
    shift
    MODE=full
    case "${1:-}" in
    "") ;;
    --smoke) MODE=smoke ;;
    -h | --help)
        sed -n "2,${last}p" "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "usage: bench/$(basename "$0") [--smoke]" >&2
        exit 2
        ;;
    esac
}

# bench_install PACKAGE...: installs the distribution's packages named.
bench_install() {
    local sudo=
    [[ $(id -u) -ne 0 ]] && sudo=sudo
    echo "bench: installing $*" >&2
    $sudo apt-get update -qq >/dev/null
    $sudo apt-get install -y -qq "$@" >/dev/null
}

# bench_home CANDIDATE...: BSI is the first bsi binary found among $BSI and
# the candidates, made absolute; WORK a new directory (removed at exit
# unless KEEP is set) holding an empty HOME and a bin/ with that bsi first
# on the PATH; git reads no configuration of the user's or the system's.
bench_home() {
    local c
    for c in "${BSI:-}" "$@"; do
        [[ -n $c && -x $c ]] && BSI=$c && break
    done
    [[ -n ${BSI:-} && -x $BSI ]] || {
        echo "bench: no bsi binary (cargo build)" >&2
        exit 1
    }
    BSI=$(cd "$(dirname "$BSI")" && pwd)/$(basename "$BSI")
    WORK=$(mktemp -d)
    trap '[[ -n ${KEEP:-} ]] || rm -rf "$WORK"' EXIT
    export HOME=$WORK/home GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 TZ=UTC
    mkdir -p "$HOME" "$WORK/bin"
    ln -s "$BSI" "$WORK/bin/bsi"
    export PATH=$WORK/bin:$PATH
}
