"""The base every custom-resource model derives from."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class Schema(BaseModel):
    """camelCase on the wire, unknown fields refused, immutable, docstrings as descriptions."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        frozen=True,
        use_attribute_docstrings=True,
    )

    def wire(self) -> dict[str, object]:
        """The model as Kubernetes stores it: camelCase keys, unset optionals left out."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")
