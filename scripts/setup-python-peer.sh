#!/usr/bin/env bash
# Creates a virtualenv holding the Python reference SDK (PyPI `babelqueue`), the real peer of
# the interop tests, and tells the tests where its interpreter is:
#   - prints `BABELQUEUE_PEER_PYTHON=<path>` on its last line, and
#   - writes <path> into build/peer-python.txt (read by tests when the env var is not set).
# Reuses an existing venv that already holds the pinned version. Fails loudly when PyPI
# cannot be reached: the interop tests must never silently skip in CI.
#
# Environment: BABELQUEUE_PEER_VERSION (default 1.24.0, the newest on PyPI when pinned),
#              BABELQUEUE_PEER_EXTRAS (default redis,gdpr,amqp,kafka,artemis,azureservicebus,
#              sqs,pulsar,otel: pika for the RabbitMQ, confluent-kafka for the Kafka and
#              python-qpid-proton for the Artemis interop tests; with `otel` also the
#              OpenTelemetry SDK and proto packages, see below), BABELQUEUE_PEER_OTEL_VERSION
#              (default 1.45.2: opentelemetry-sdk and opentelemetry-proto; the `otel` extra
#              brings only the API, but the otel interop tests record the Python spans with the
#              SDK's in-memory exporter and decode OTLP with the proto package),
#              BABELQUEUE_PEER_VENV (default build/.venv-peer), PYTHON (default python3).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
version=${BABELQUEUE_PEER_VERSION:-1.24.0}
extras=${BABELQUEUE_PEER_EXTRAS:-redis,gdpr,amqp,kafka,artemis,azureservicebus,sqs,pulsar,otel}
otel_version=${BABELQUEUE_PEER_OTEL_VERSION:-1.45.2}
venv=${BABELQUEUE_PEER_VENV:-$repo/build/.venv-peer}
python=${PYTHON:-python3}

# What pip installs: the SDK with its extras, plus (with `otel`) the pinned OpenTelemetry SDK
# and proto packages, which no babelqueue extra pulls in.
packages=("babelqueue[$extras]==$version")
marker="$version [$extras]"
if [[ ,$extras, == *,otel,* ]]; then
  packages+=("opentelemetry-sdk==$otel_version" "opentelemetry-proto==$otel_version")
  marker+=" opentelemetry $otel_version"
fi

# The modules the peer needs: babelqueue and the client library of each transport extra.
imports=babelqueue
[[ ,$extras, == *,amqp,* ]] && imports+=,pika
[[ ,$extras, == *,kafka,* ]] && imports+=,confluent_kafka
[[ ,$extras, == *,redis,* ]] && imports+=,redis
[[ ,$extras, == *,artemis,* ]] && imports+=,proton
[[ ,$extras, == *,azureservicebus,* ]] && imports+=,azure.servicebus
[[ ,$extras, == *,sqs,* ]] && imports+=,boto3
[[ ,$extras, == *,pulsar,* ]] && imports+=,pulsar
[[ ,$extras, == *,otel,* ]] && imports+=,opentelemetry.trace,opentelemetry.sdk.trace,opentelemetry.proto

installed() {
  [[ -x "$venv/bin/python" ]] && [[ -f "$venv/.babelqueue-peer" ]] &&
    [[ "$(cat "$venv/.babelqueue-peer")" == "$marker" ]] &&
    "$venv/bin/python" -c "import $imports" 2>/dev/null
}

if installed; then
  echo "python-peer: reusing $venv (babelqueue $marker)"
else
  rm -rf "$venv"
  mkdir -p "$(dirname "$venv")"
  if ! "$python" -m venv "$venv" 2>/dev/null; then
    # e.g. a python3 without ensurepip: Debian's own interpreter has it via python3-venv.
    rm -rf "$venv"
    /usr/bin/python3 -m venv "$venv"
  fi
  echo "python-peer: pip install ${packages[*]} into $venv"
  if ! "$venv/bin/pip" install --quiet --disable-pip-version-check --timeout 60 \
      "${packages[@]}"; then
    echo "ERROR: python-peer: could not install ${packages[*]} from PyPI." >&2
    echo "ERROR: the interop tests need the real Python peer; fix the network or the pin." >&2
    rm -rf "$venv"
    exit 1
  fi
  "$venv/bin/python" -c "import $imports" || {
    echo "ERROR: python-peer: ${packages[*]} installed but $imports do not all import" >&2
    rm -rf "$venv"
    exit 1
  }
  echo "$marker" >"$venv/.babelqueue-peer"
fi

mkdir -p "$repo/build"
echo "$venv/bin/python" >"$repo/build/peer-python.txt"
echo "BABELQUEUE_PEER_PYTHON=$venv/bin/python"
