#!/usr/bin/env bash
# Entrypoint of the Spark job image, with the arguments Spark's Kubernetes backend gives
# its pods (the contract of Spark's own image):
#   driver ARGS...  the driver pod: spark-submit in client mode, bound to the pod's IP
#   executor        an executor pod: KubernetesExecutorBackend, configured by the
#                   SPARK_* environment the driver put in the pod spec
#   anything else   run as given (python3 -m odradek.spark.pipelines.activity_tracking ...)
set -euo pipefail

: "${SPARK_HOME:?SPARK_HOME must name the Spark installation}"

case "${1:-}" in
  driver)
    shift
    exec "$SPARK_HOME/bin/spark-submit" \
      --conf "spark.driver.bindAddress=${SPARK_DRIVER_BIND_ADDRESS:?}" \
      --conf "spark.executorEnv.SPARK_DRIVER_POD_IP=$SPARK_DRIVER_BIND_ADDRESS" \
      --deploy-mode client \
      "$@"
    ;;
  executor)
    shift
    # The driver passes the executor's JVM options as SPARK_JAVA_OPT_0, _1, ... in order.
    java_opts=()
    while IFS= read -r name; do
      java_opts+=("${!name}")
    done < <(compgen -e | grep '^SPARK_JAVA_OPT_[0-9]*$' | sort -t_ -k4 -n || true)
    classpath="${SPARK_CONF_DIR:-$SPARK_HOME/conf}:${SPARK_CLASSPATH:+$SPARK_CLASSPATH:}$SPARK_HOME/jars/*"
    host="$SPARK_EXECUTOR_POD_IP"
    if [[ "$host" == *:* ]]; then
      host="[$host]"  # IPv6
    fi
    exec "${JAVA_HOME:?}/bin/java" \
      "${java_opts[@]}" \
      -Xms"$SPARK_EXECUTOR_MEMORY" -Xmx"$SPARK_EXECUTOR_MEMORY" \
      -cp "$classpath" \
      org.apache.spark.scheduler.cluster.k8s.KubernetesExecutorBackend \
      --driver-url "$SPARK_DRIVER_URL" \
      --executor-id "$SPARK_EXECUTOR_ID" \
      --cores "$SPARK_EXECUTOR_CORES" \
      --app-id "$SPARK_APPLICATION_ID" \
      --hostname "$host" \
      --resourceProfileId "$SPARK_RESOURCE_PROFILE_ID" \
      --podName "$SPARK_EXECUTOR_POD_NAME"
    ;;
  *)
    exec "$@"
    ;;
esac
