# etcd for the managed coordination store of the tests' Clusters: the statically linked
# v3.5.17 that go_tool.sh builds, the version of the operator's default image
# (quay.io/coreos/etcd:v3.5.17, which cannot be pulled here). Runs as the pod says (uid
# 1000 under the operator's security context).
FROM scratch
COPY etcd /usr/local/bin/etcd
ENV PATH=/usr/local/bin
ENTRYPOINT ["/usr/local/bin/etcd"]
