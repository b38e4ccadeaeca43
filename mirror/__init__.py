"""MirrorMaker: copies topics from a source cluster to a target cluster.

A consumer in a group on the source feeds a bounded queue drained by an
idempotent producer on the target; source offsets are committed only after
the target acknowledged (at-least-once). With ``exactlyOnce``, transactional
producers copy each record once, with the source offsets stored on the target
in the same transactions. See docs/mirrormaker.md.
"""
