#!/usr/bin/env bash
# docker-compose.yml's Kafka: runs inside the apache/kafka image as its command (mounted at
# /platform/infra). One KRaft node whose client listener is SASL_SSL, SCRAM-SHA-512 users created
# when the storage is formatted, and the StandardAuthorizer with the ACLs of kafka-acls.sh: the
# same broker as scripts/infra/kafka.sh's, over TLS (contracts.md, "Trust inside the platform").
#
# On first start it makes a development CA and the broker's certificate (for host "kafka") with
# the JDK's keytool into $TLS_DIR, a volume the services mount read-only for ca.crt; the stores'
# password is random and stays in that volume. Formats the data dir once, with the users.
# Then starts the broker, applies the ACLs once per data dir, and marks itself ready for the
# healthcheck ($RUN_DIR/ready).
#
# Env (docker-compose.yml sets them): KAFKA_ADMIN_PASSWORD and KAFKA_PASSWORD_<SERVICE> for
# each user of kafka-acls.sh; KAFKA_CLUSTER_ID. The paths, host name and ports below can be
# overridden too (to try the script outside the image, with wrappers for Kafka's bin/ scripts).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=kafka-acls.sh
. "$here/kafka-acls.sh"
# shellcheck source=kafka-broker.sh
. "$here/kafka-broker.sh"

KAFKA_BIN="${KAFKA_BIN:-/opt/kafka/bin}"
DATA_DIR="${DATA_DIR:-/var/lib/kafka/data}"
TLS_DIR="${TLS_DIR:-/etc/kafka/secrets}"
RUN_DIR="${RUN_DIR:-/tmp/platform-kafka}"
HOST="${KAFKA_HOST:-kafka}" PORT="${KAFKA_PORT:-9092}" CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-9093}"
ADMIN_USER=admin
: "${KAFKA_ADMIN_PASSWORD:?}" "${KAFKA_CLUSTER_ID:?}"

log() { printf '[compose-kafka] %s\n' "$*" >&2; }

# password_of USER: its password from the environment.
password_of() {
  local var
  if [ "$1" = "$ADMIN_USER" ]; then var=KAFKA_ADMIN_PASSWORD
  else var="KAFKA_PASSWORD_$(tr '[:lower:]' '[:upper:]' <<<"$1")"; fi
  [ -n "${!var:-}" ] || { log "error: $var is not set"; exit 1; }
  echo "${!var}"
}

# A CA of this installation and the broker's certificate signed by it, made once.
make_certificates() {
  [ -f "$TLS_DIR/broker.p12" ] && return 0
  log "making a development CA and the broker's certificate in $TLS_DIR"
  local pw tmp
  pw="$(head -c 24 /dev/urandom | base64 | tr -d '/+=')"
  tmp="$(mktemp -d)"
  keytool -genkeypair -storetype PKCS12 -keystore "$tmp/ca.p12" -storepass "$pw" -alias ca \
    -dname CN=platform-development-kafka-ca -keyalg RSA -keysize 2048 -validity 3650 -ext bc:c
  keytool -exportcert -keystore "$tmp/ca.p12" -storepass "$pw" -alias ca -rfc -file "$tmp/ca.crt"
  keytool -genkeypair -storetype PKCS12 -keystore "$tmp/broker.p12" -storepass "$pw" \
    -alias broker -dname CN=kafka -keyalg RSA -keysize 2048 -validity 3650
  keytool -certreq -keystore "$tmp/broker.p12" -storepass "$pw" -alias broker -file "$tmp/broker.csr"
  keytool -gencert -keystore "$tmp/ca.p12" -storepass "$pw" -alias ca -rfc -validity 3650 \
    -infile "$tmp/broker.csr" -outfile "$tmp/broker.crt" \
    -ext san=dns:kafka,dns:localhost -ext eku=serverAuth,clientAuth
  keytool -importcert -noprompt -keystore "$tmp/broker.p12" -storepass "$pw" -alias ca -file "$tmp/ca.crt"
  keytool -importcert -noprompt -keystore "$tmp/broker.p12" -storepass "$pw" -alias broker -file "$tmp/broker.crt"
  # The broker's own connections (inter-broker, the CLI tools) verify it against the CA too.
  keytool -importcert -noprompt -storetype PKCS12 -keystore "$tmp/truststore.p12" -storepass "$pw" \
    -alias ca -file "$tmp/ca.crt"
  (umask 077 && echo "$pw" >"$TLS_DIR/store-password")
  chmod 644 "$tmp/ca.crt"
  chmod 600 "$tmp/broker.p12" "$tmp/truststore.p12"
  mv "$tmp/ca.crt" "$tmp/truststore.p12" "$TLS_DIR/"
  mv "$tmp/broker.p12" "$TLS_DIR/" # last: it marks the set as complete
  # The CA's key is not kept: nothing else is ever signed with it.
  rm -rf "$tmp"
}

write_config() {
  local admin_pw store_pw
  admin_pw="$(password_of "$ADMIN_USER")"
  store_pw="$(cat "$TLS_DIR/store-password")"
  (umask 077 && cat >"$RUN_DIR/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@localhost:$CONTROLLER_PORT
# Clients: SASL_SSL on the compose network; the controller only inside this container.
listeners=SASL_SSL://:$PORT,CONTROLLER://localhost:$CONTROLLER_PORT
advertised.listeners=SASL_SSL://$HOST:$PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=SASL_SSL
listener.security.protocol.map=SASL_SSL:SASL_SSL,CONTROLLER:SASL_PLAINTEXT
ssl.keystore.type=PKCS12
ssl.keystore.location=$TLS_DIR/broker.p12
ssl.keystore.password=$store_pw
ssl.truststore.type=PKCS12
ssl.truststore.location=$TLS_DIR/truststore.p12
ssl.truststore.password=$store_pw
$(kafka_broker_properties sasl_ssl "$ADMIN_USER" "$admin_pw" "$DATA_DIR")
EOF
  )
  (umask 077 && cat >"$RUN_DIR/admin.properties" <<EOF
$(kafka_admin_login SASL_SSL "$ADMIN_USER" "$admin_pw")
ssl.truststore.type=PKCS12
ssl.truststore.location=$TLS_DIR/truststore.p12
ssl.truststore.password=$store_pw
EOF
  )
}

format_storage() {
  [ -f "$DATA_DIR/meta.properties" ] && return 0
  local u scram=()
  for u in $ADMIN_USER $KAFKA_SERVICE_USERS; do
    scram+=(--add-scram "SCRAM-SHA-512=[name=$u,password=$(password_of "$u")]")
  done
  log "formatting $DATA_DIR with users $ADMIN_USER $KAFKA_SERVICE_USERS"
  "$KAFKA_BIN/kafka-storage.sh" format -t "$KAFKA_CLUSTER_ID" -c "$RUN_DIR/server.properties" "${scram[@]}"
}

mkdir -p "$RUN_DIR"
rm -f "$RUN_DIR/ready"
make_certificates
write_config
format_storage

"$KAFKA_BIN/kafka-server-start.sh" "$RUN_DIR/server.properties" &
broker=$!
trap 'kill -TERM "$broker" 2>/dev/null || true' TERM INT

admin_tool() { "$@" --bootstrap-server "$HOST:$PORT" --command-config "$RUN_DIR/admin.properties"; }
until admin_tool "$KAFKA_BIN/kafka-broker-api-versions.sh" >/dev/null 2>&1; do
  kill -0 "$broker" 2>/dev/null || { wait "$broker"; exit $?; }
  sleep 1
done
if [ ! -f "$DATA_DIR/platform-acls-applied" ]; then
  log "applying the ACLs of kafka-acls.sh"
  bash "$here/kafka-acls.sh" "$KAFKA_BIN/kafka-acls.sh" --bootstrap-server "$HOST:$PORT" \
    --command-config "$RUN_DIR/admin.properties"
  touch "$DATA_DIR/platform-acls-applied"
fi
touch "$RUN_DIR/ready"
log "ready"
status=0
wait "$broker" || status=$?
# A signal ends the first wait at once (the trap passed it on): wait for the broker's shutdown.
if kill -0 "$broker" 2>/dev/null; then status=0; wait "$broker" || status=$?; fi
exit "$status"
