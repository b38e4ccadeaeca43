"""MirrorMaker: copies topics from a source cluster to a target cluster.

A consumer in a group on the source feeds a bounded queue drained by an
idempotent producer on the target; source offsets are committed only after
the target acknowledged (at-least-once). See docs/mirrormaker.md.
"""
