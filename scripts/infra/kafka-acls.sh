#!/usr/bin/env bash
# The platform's Kafka principals and what each may do (contracts.md, "Trust inside the
# platform"): one SCRAM user per service that uses Kafka, each writing only its own topics and
# reading what it consumes in consumer groups named after itself. The one list, used by the local
# broker (scripts/infra/kafka.sh) and by docker-compose.yml's kafka-setup (run as a script there).
#
# Sourced: kafka_acl_args prints one line per AclCommand call (the arguments after
# --bootstrap-server/--command-config). Run as a script:
#   kafka-acls.sh ACL-COMMAND...   e.g. kafka-acls.sh /opt/kafka/bin/kafka-acls.sh
#                                  --bootstrap-server kafka:9092 --command-config admin.properties
# runs ACL-COMMAND once per line, with that line's arguments appended. Adding an ACL that exists
# already is a no-op, so applying the list twice is harmless.
#
# Topics are those of libs/shared/src/events.ts (TOPICS), and deployments' own log notices
# (deployment.log-appended, services/deployments/src/deployments/log-notices.ts: "this log now
# ends at line N", which wakes every replica's followers); a new topic or consumer goes here too.
#   projects     writes project.deleted, service.deleted; reads all three (deletion cascade, live url)
#   deployments  writes deployment.status-changed; reads all three (cleanup, status watch);
#                writes, reads and creates deployment.log-appended (no other service sees it)
#   webhooks     reads deployment.status-changed, project.deleted
# auth publishes and consumes nothing: it has no Kafka client and so no principal.
# Consumer groups: every group id a service uses starts with its name (KAFKA_GROUP_ID
# "projects", "projects-platform", a test's "projects-test-…", watchEvents' "deployments-wait-…"),
# so each service may READ the groups of that prefix and no other.
# Topic creation: every service creates the platform's topics it may be first to need at start-up
# (openKafka -> ensureTopics), so each may CREATE and DESCRIBE the three topics (creating a topic
# grants no right to write it). The admin principal is a super user: the broker itself, the infra
# scripts and the tests' own clients (which create throwaway topics and groups).

KAFKA_SERVICE_USERS="projects deployments webhooks"
KAFKA_PLATFORM_TOPICS="deployment.status-changed project.deleted service.deleted"
KAFKA_DEPLOYMENTS_OWN_TOPICS="deployment.log-appended"

# kafka_topic_args TOPIC...: ' --topic T' for each.
kafka_topic_args() {
  local t
  for t in "$@"; do printf -- ' --topic %s' "$t"; done
}

kafka_acl_args() {
  local u all_topics
  # shellcheck disable=SC2086 # word lists
  all_topics="$(kafka_topic_args $KAFKA_PLATFORM_TOPICS)"
  # Writers, each of its own topics only.
  echo "--add --allow-principal User:projects --operation Write --operation Describe$(kafka_topic_args project.deleted service.deleted)"
  echo "--add --allow-principal User:deployments --operation Write --operation Describe$(kafka_topic_args deployment.status-changed)"
  # Readers of the topics they consume.
  echo "--add --allow-principal User:projects --allow-principal User:deployments --operation Read --operation Describe$all_topics"
  echo "--add --allow-principal User:webhooks --operation Read --operation Describe$(kafka_topic_args deployment.status-changed project.deleted)"
  # Their consumer groups: those whose id starts with the service's name.
  for u in $KAFKA_SERVICE_USERS; do
    echo "--add --allow-principal User:$u --operation Read --operation Describe --resource-pattern-type prefixed --group $u"
  done
  # Topic creation at start-up (ensureTopics).
  echo "--add$(for u in $KAFKA_SERVICE_USERS; do printf -- ' --allow-principal User:%s' "$u"; done) --operation Create --operation Describe$all_topics"
  # deployments' own topics: it alone creates, writes and reads them.
  # shellcheck disable=SC2086 # a word list
  echo "--add --allow-principal User:deployments --operation Create --operation Write --operation Read --operation Describe$(kafka_topic_args $KAFKA_DEPLOYMENTS_OWN_TOPICS)"
}

# Executed (docker-compose's kafka-setup): apply every line with the given command.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  [ $# -ge 1 ] || { echo "usage: $0 ACL-COMMAND [ARGS...]" >&2; exit 2; }
  mapfile -t lines < <(kafka_acl_args)
  for line in "${lines[@]}"; do
    # shellcheck disable=SC2086 # a line is a list of arguments without spaces in them
    "$@" $line </dev/null >/dev/null
  done
  echo "kafka ACLs applied" >&2
fi
