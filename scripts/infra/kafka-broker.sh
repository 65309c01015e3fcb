# shellcheck shell=bash
# What the platform's two single-node Kafka brokers share, sourced by both: kafka.sh's on this
# machine (SASL_PLAINTEXT on loopback) and compose-kafka.sh's in docker-compose (SASL_SSL).
# Each writes its own listeners (and TLS stores) and takes the rest of server.properties from here.

# kafka_broker_properties LISTENER ADMIN_USER ADMIN_PASSWORD LOG_DIR: the server.properties lines
# after the listeners: SCRAM-SHA-512 clients on LISTENER (sasl_plaintext, sasl_ssl), the controller
# listener's PLAIN login of the admin alone, the ACLs, and the single node's settings.
kafka_broker_properties() {
  local listener="$1" admin="$2" admin_pw="$3" log_dirs="$4"
  cat <<PROPERTIES
# Clients: SCRAM-SHA-512, users stored in the metadata log (formatted with --add-scram).
sasl.enabled.mechanisms=SCRAM-SHA-512
sasl.mechanism.inter.broker.protocol=SCRAM-SHA-512
listener.name.$listener.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="$admin" password="$admin_pw";
# The controller listener: KRaft cannot use SCRAM there (the credentials live in the metadata
# the controller serves), so PLAIN with the admin as its only user; nobody else can log in.
sasl.mechanism.controller.protocol=PLAIN
listener.name.controller.sasl.enabled.mechanisms=PLAIN
listener.name.controller.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="$admin" password="$admin_pw" user_$admin="$admin_pw";
# ACLs (kafka-acls.sh); what no ACL allows is refused.
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
super.users=User:$admin
allow.everyone.if.no.acl.found=false
log.dirs=$log_dirs
# Single node: every internal topic must fit on one replica.
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
default.replication.factor=1
min.insync.replicas=1
# Tests join consumer groups and expect assignments right away.
group.initial.rebalance.delay.ms=0
# The services create their topics with the admin client; a mistyped topic must fail.
auto.create.topics.enable=false
num.partitions=3
PROPERTIES
}

# kafka_admin_login PROTOCOL ADMIN_USER ADMIN_PASSWORD: a CLI tool's client properties that log in
# as the admin over PROTOCOL (SASL_PLAINTEXT, SASL_SSL).
kafka_admin_login() {
  cat <<PROPERTIES
security.protocol=$1
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="$2" password="$3";
PROPERTIES
}
