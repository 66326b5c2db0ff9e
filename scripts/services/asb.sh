# shellcheck shell=bash
# The Azure Service Bus stand-in of scripts/services.sh (sourced by it), part of the artemis
# service (artemis.sh starts and stops it with its broker). Exports (with artemis's):
#             BABELQUEUE_ASB_CONNECTION_STRING  the Azure Service Bus stand-in on the same broker:
#                                          Endpoint=sb://127.0.0.1:<amqp port>;
#                                          SharedAccessKeyName=RootManageSharedAccessKey;
#                                          SharedAccessKey=<fixed test key, base64>;
#                                          UseDevelopmentEmulator=true; (plain AMQP on the amqp
#                                          port, SASL ANONYMOUS, then a CBS put-token on `$cbs`
#                                          answered by scripts/artemis/cbs-responder.py: 202 for
#                                          a SAS token signed with that key name and key, not
#                                          expired, whose sr covers the audience; 401 otherwise;
#                                          entity URLs amqps://127.0.0.1:<amqp port>/<queue>
#                                          are the queue <queue>). Not Service Bus: no PeekLock
#                                          lock tokens, no DeliveryCount (docs/testing.md)
#             BABELQUEUE_ASB_CBS_LOG       the responder's log: one JSON object per put-token
#                                          request (audience, key_name, sr, expiry, token,
#                                          status, verdict, reasons)
#
# No Service Bus emulator can be had here (Microsoft's is a container image). The stand-in:
# the artemis broker (artemis.sh) takes SASL ANONYMOUS logins (etc/login.config, configure.py) and
# has a MULTICAST address `$cbs`, and scripts/artemis/cbs-responder.py (python-qpid-proton)
# answers the CBS put-token requests sent there, verifying each SAS token against the key
# below and logging it to DIR/cbs.log (BABELQUEUE_ASB_CBS_LOG). The real azure-servicebus SDK
# sends and receives (RECEIVE_AND_DELETE) through it; see docs/testing.md for what it is not.
asb_key_name=RootManageSharedAccessKey
asb_key='x4IkRxAcH6hTdcgljqGlVCxRFtmkMTGj/KoZtvd2iLs='  # a fixed test key (base64 of 32 bytes)
cbs_proton_version=0.40.0
cbs_pattern='cbs-responder\.py'

# cbs_python DIR: writes to DIR/cbs-python an interpreter that imports python-qpid-proton: the
# Python peer's ($BABELQUEUE_PEER_PYTHON, else the one build/peer-python.txt names) when it
# does, else a venv made once in ${BABELQUEUE_CACHE_DIR:-~/.cache/babelqueue}/cbs-venv-<version>
# (cache_fill: under its lock, redone when interrupted).
cbs_python() {
  local dir=$1 py=${BABELQUEUE_PEER_PYTHON:-} cache
  if [[ -z $py && -s $repo/build/peer-python.txt ]]; then
    py=$(head -n 1 "$repo/build/peer-python.txt")
  fi
  if [[ -z $py || ! -x $py ]] || ! "$py" -c 'import proton' >/dev/null 2>&1 </dev/null 9>&-; then
    cache=$cache_root/cbs-venv-$cbs_proton_version
    cache_fill "$cache" venv/bin/python cbs-responder python3 cbs_venv_create || return 1
    py=$cache/venv/bin/python
    "$py" -c 'import proton' >/dev/null 2>&1 </dev/null 9>&- ||
      die "$py does not import proton (delete $cache and start again)"
  fi
  echo "$py" >"$dir/cbs-python"
}

# cbs_venv_create: ./venv with python-qpid-proton from PyPI (cache_fill's FETCH).
cbs_venv_create() {
  rm -rf venv
  if ! { python3 -m venv venv || { rm -rf venv && /usr/bin/python3 -m venv venv; }; } \
      >pip.log 2>&1 </dev/null ||
    ! timeout --foreground "$download_timeout" venv/bin/pip install --quiet \
      --disable-pip-version-check --timeout 60 "python-qpid-proton==$cbs_proton_version" \
      >>pip.log 2>&1 </dev/null ||
    ! venv/bin/python -c 'import proton' >>pip.log 2>&1 </dev/null; then
    echo "services: ERROR: the python-qpid-proton venv failed; last lines of $PWD/pip.log:" >&2
    tail -n 30 pip.log >&2
    return 1
  fi
  echo "python-qpid-proton $cbs_proton_version, venv $(du -sh venv | cut -f1)"
}

# cbs_launch DIR: starts the responder against the amqp acceptor of DIR's broker.
cbs_launch() {
  local dir=$1 amqp
  read -r _ amqp _ <"$dir/ports"
  echo "[$(date '+%F %T')] services.sh: starting the CBS responder" >>"$dir/cbs-responder.log"
  log_mark "$dir/cbs-responder.log" "$dir/cbs-log-offset"
  launch "$dir/cbs.pid" "$dir/cbs-responder.log" -- "$(cat "$dir/cbs-python")" \
    "$repo/scripts/artemis/cbs-responder.py" --url "amqp://127.0.0.1:$amqp" \
    --key-name "$asb_key_name" --key "$asb_key" --log "$dir/cbs.log"
}

# cbs_ready DIR: the responder printed `ready` since its launch (it logged in anonymously,
# attached to $cbs and its own put-token request came back answered); 2 when it is gone.
cbs_ready() {
  local dir=$1
  launched "$dir/cbs.pid" "$cbs_pattern" "the CBS responder" || return
  log_since "$dir/cbs-responder.log" "$dir/cbs-log-offset" | grep -qx 'cbs-responder: ready'
}

# cbs_start DIR: cbs_launch, then wait until it is ready (30 s); its time in DIR/cbs-ready-time.
cbs_start() {
  local dir=$1 t0=$EPOCHREALTIME
  cbs_launch "$dir"
  ready_poll=0.1 wait_ready 30 cbs_ready "$dir" "$dir/cbs-responder.log" || return 1
  echo "$(elapsed "$t0")" >"$dir/cbs-ready-time"
}

cbs_alive() { alive_pid "$1/cbs.pid" "$cbs_pattern" >/dev/null; }
cbs_stop() { stop_pid "$1/cbs.pid" "$cbs_pattern" 5; }
