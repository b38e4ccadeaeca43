"""The operator's view of the Kubernetes API: the few calls it makes, behind one Protocol."""

from __future__ import annotations

import base64
import contextlib
import os
from datetime import UTC, datetime
from typing import Any, Protocol

from ..builders.meta import Obj
from ..constants import FIELD_MANAGER


class Kube(Protocol):
    """What reconciliation needs from the API server."""

    def apply(self, obj: Obj) -> None:
        """Server-side apply as the operator's field manager, taking over conflicts."""

    def get(
        self, api_version: str, kind: str, name: str, namespace: str | None = None
    ) -> Obj | None:
        """The object, or None when it does not exist."""

    def list(
        self, api_version: str, kind: str, namespace: str | None, labels: dict[str, str]
    ) -> list[Obj]: ...

    def delete(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None = None,
        grace_seconds: int | None = None,
    ) -> None:
        """Delete if present (background propagation)."""

    def patch_status(
        self, api_version: str, kind: str, name: str, namespace: str, status: Obj
    ) -> None:
        """Merge-patch the status subresource."""

    def event(self, involved: Obj, type_: str, reason: str, message: str) -> None:
        """Record a core/v1 Event about ``involved``."""


def decoded_data(secret: Obj | None) -> dict[str, bytes]:
    """A Secret's data, decoded; empty when there is no Secret."""
    data = (secret or {}).get("data") or {}
    return {key: base64.b64decode(value) for key, value in data.items()}


def secret_data(kube: Kube, name: str, namespace: str) -> dict[str, bytes]:
    """The decoded data of the Secret ``name``; empty when it does not exist."""
    return decoded_data(kube.get("v1", "Secret", name, namespace))


class ApiKube:
    """Kube over the official client's dynamic API (in-cluster config, else kubeconfig)."""

    def __init__(self) -> None:
        import kubernetes
        from kubernetes.config.config_exception import ConfigException

        api: Any = kubernetes  # the client is untyped
        try:
            api.config.load_incluster_config()
        except ConfigException:
            # KUBECONFIG as it is now (the client reads it once, when first imported)
            api.config.load_kube_config(config_file=os.environ.get("KUBECONFIG"))
        self._client: Any = api.dynamic.DynamicClient(api.client.ApiClient())

    def _resource(self, api_version: str, kind: str) -> Any:
        return self._client.resources.get(api_version=api_version, kind=kind)

    def apply(self, obj: Obj) -> None:
        meta = obj["metadata"]
        self._client.server_side_apply(
            self._resource(obj["apiVersion"], obj["kind"]),
            body=obj,
            name=meta["name"],
            namespace=meta.get("namespace"),
            field_manager=FIELD_MANAGER,
            force_conflicts=True,
        )

    def get(
        self, api_version: str, kind: str, name: str, namespace: str | None = None
    ) -> Obj | None:
        from kubernetes.dynamic.exceptions import NotFoundError

        try:
            found = self._resource(api_version, kind).get(name=name, namespace=namespace)
        except NotFoundError:
            return None
        result: Obj = found.to_dict()
        return result

    def list(
        self, api_version: str, kind: str, namespace: str | None, labels: dict[str, str]
    ) -> list[Obj]:
        selector = ",".join(f"{k}={v}" for k, v in sorted(labels.items())) or None
        found = self._resource(api_version, kind).get(namespace=namespace, label_selector=selector)
        return [item.to_dict() for item in found.items]

    def delete(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None = None,
        grace_seconds: int | None = None,
    ) -> None:
        from kubernetes.dynamic.exceptions import NotFoundError

        body: Obj = {"propagationPolicy": "Background"}
        if grace_seconds is not None:
            body["gracePeriodSeconds"] = grace_seconds
        with contextlib.suppress(NotFoundError):
            self._resource(api_version, kind).delete(name=name, namespace=namespace, body=body)

    def patch_status(
        self, api_version: str, kind: str, name: str, namespace: str, status: Obj
    ) -> None:
        self._resource(api_version, kind).status.patch(
            name=name,
            namespace=namespace,
            body={"status": status},
            content_type="application/merge-patch+json",
        )

    def event(self, involved: Obj, type_: str, reason: str, message: str) -> None:
        meta = involved["metadata"]
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        event = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"generateName": f"{meta['name']}.", "namespace": meta["namespace"]},
            "involvedObject": {
                "apiVersion": involved["apiVersion"],
                "kind": involved["kind"],
                "name": meta["name"],
                "namespace": meta["namespace"],
                "uid": meta.get("uid"),
            },
            "type": type_,
            "reason": reason,
            "message": message,
            "source": {"component": FIELD_MANAGER},
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
        }
        self._resource("v1", "Event").create(body=event, namespace=meta["namespace"])
