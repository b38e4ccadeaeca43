"""Everything a Cluster resource needs, in the order it should be applied."""

from __future__ import annotations

from ..constants import BROKER_CONFIG_FILE
from ..models import ClusterSpec
from . import names
from .broker_config import broker_properties
from .broker_statefulset import broker_statefulset
from .disruption import disruption_budget
from .etcd import etcd_service, etcd_statefulset
from .meta import Obj, Owner, config_hash, metadata
from .monitoring import prometheus_rule, service_monitor
from .rbac import node_reader_binding, service_account
from .services import bootstrap_service, headless_service


def config_map(owner: Owner, properties: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata(owner, names.config(owner.name), "broker"),
        "data": {BROKER_CONFIG_FILE: properties},
    }


def cluster_objects(owner: Owner, spec: ClusterSpec) -> list[Obj]:
    """Dependencies first: the store and config exist before brokers start."""
    properties = broker_properties(owner.name, owner.namespace, spec)
    objects = [service_account(owner)]
    if spec.rack is not None:
        objects.append(node_reader_binding(owner))
    if spec.coordination.managed is not None:
        objects += [
            etcd_service(owner),
            etcd_statefulset(owner, spec.coordination.managed, tls=spec.secured),
            disruption_budget(owner, names.etcd(owner.name), "etcd"),
        ]
    objects += [
        config_map(owner, properties),
        headless_service(owner, spec),
        bootstrap_service(owner, spec),
        broker_statefulset(owner, spec, config_hash(properties)),
        disruption_budget(owner, names.brokers(owner.name), "broker"),
    ]
    if spec.metrics.service_monitor:
        objects.append(service_monitor(owner))
    if spec.metrics.prometheus_rule:
        objects.append(prometheus_rule(owner, spec.cluster_ca.renewal_days))
    return objects
