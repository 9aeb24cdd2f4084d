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
