"""Prometheus Operator objects: scrape the brokers and alert on what matters."""

from __future__ import annotations

from . import names
from .meta import Obj, Owner, metadata, selector_labels


def service_monitor(owner: Owner) -> Obj:
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "ServiceMonitor",
        "metadata": metadata(owner, names.brokers(owner.name), "broker"),
        "spec": {
            "selector": {"matchLabels": selector_labels(owner, "broker")},
            "endpoints": [{"port": "http", "path": "/metrics", "interval": "30s"}],
        },
    }


def _alert(name: str, expr: str, minutes: int, severity: str, summary: str) -> Obj:
    return {
        "alert": name,
        "expr": expr,
        "for": f"{minutes}m",
        "labels": {"severity": severity},
        "annotations": {"summary": summary},
    }


def alert_rules(pods: str, claims: str, renewal_days: int | str, namespace: str = "") -> list[Obj]:
    """The broker alerts; ``pods``/``claims`` are regexes scoping them to some brokers,
    ``renewal_days`` how long before expiry the operator renews broker certificates."""
    where = f'namespace="{namespace}",' if namespace else ""
    scope = f'{where}pod=~"{pods}"'
    return [
        _alert(
            "OdradekUnderReplicatedPartitions",
            f"sum by (namespace) (odradek_under_replicated_partitions{{{scope}}}) > 0",
            10,
            "warning",
            "Partitions have fewer in-sync replicas than replicas.",
        ),
        _alert(
            "OdradekOfflinePartitions",
            f"sum by (namespace) (odradek_offline_partitions{{{scope}}}) > 0",
            1,
            "critical",
            "Partitions have no leader: producers and consumers are stuck.",
        ),
        _alert(
            "OdradekActiveControllerCount",
            f"sum by (namespace) (odradek_active_controller{{{scope}}}) != 1",
            2,
            "critical",
            "There should be exactly one active controller.",
        ),
        _alert(
            "OdradekDiskNearlyFull",
            f'kubelet_volume_stats_available_bytes{{{where}persistentvolumeclaim=~"{claims}"}}'
            " / kubelet_volume_stats_capacity_bytes < 0.15",
            10,
            "warning",
            "A broker volume has less than 15% free space.",
        ),
        _alert(
            "OdradekCertificateNotRenewed",
            f"min by (namespace, pod) (odradek_tls_certificate_expiry_timestamp_seconds"
            f"{{{scope}}}) - time() < {renewal_days} * 86400",
            60,
            "warning",
            "A broker's TLS certificate is inside its renewal window and was not renewed.",
        ),
        _alert(
            "OdradekConsumerLag",
            f"max by (namespace, group, topic) (odradek_consumer_lag{{{scope}}}) > 100000",
            15,
            "warning",
            "A consumer group is far behind.",
        ),
    ]


def prometheus_rule(owner: Owner, certificate_renewal_days: int) -> Obj:
    """Alerts for this cluster's brokers only."""
    brokers = names.brokers(owner.name)
    scope = f"{brokers}-[0-9]+", f"data-{brokers}-[0-9]+"
    rules = alert_rules(*scope, certificate_renewal_days, owner.namespace)
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": metadata(owner, brokers, "broker"),
        "spec": {"groups": [{"name": f"odradek-{owner.name}", "rules": rules}]},
    }
