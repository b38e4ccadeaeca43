# The pod sandbox image of the tests' real nodes (containerd's sandbox_image): Debian's
# statically linked catatonit in pause mode, as uid 65535 like Kubernetes' own pause.
FROM scratch
COPY catatonit /pause
USER 65535:65535
ENTRYPOINT ["/pause", "-P"]
