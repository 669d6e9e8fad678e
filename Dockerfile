# holdco's container image: one static binary (the SQLite driver is pure
# Go, so CGO_ENABLED=0) on an empty base, run as a non-root user. The image
# downloads nothing when it runs. Build: docker build -t holdco .
# Every role runs from it: `serve --roles api` (or mcp, oauth, sites),
# `worker`, `migrate`, `admin …`, `temporal`; see docker-compose.yml.
ARG GO_VERSION=1.26.8

FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
ENV CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-buildvcs=false
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
# -s -w drop the symbol tables (about 70 MB of the Temporal server's);
# timetzdata embeds the time zone database the empty base lacks.
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    go build -trimpath -tags timetzdata -ldflags="-s -w" -o /out/holdco ./cmd/holdco
# What the empty base needs: CA certificates (HTTPS to providers), a
# passwd entry for the non-root user, a writable /tmp and data directory.
RUN mkdir -p /out/rootfs/etc/ssl/certs /out/rootfs/tmp /out/rootfs/data \
    && cp /etc/ssl/certs/ca-certificates.crt /out/rootfs/etc/ssl/certs/ \
    && echo 'holdco:x:65532:65532:holdco:/data:/sbin/nologin' > /out/rootfs/etc/passwd \
    && echo 'holdco:x:65532:' > /out/rootfs/etc/group \
    && chmod 1777 /out/rootfs/tmp \
    && chown 65532:65532 /out/rootfs/data

FROM scratch
COPY --from=build /out/rootfs/ /
COPY --from=build /out/holdco /holdco
USER 65532:65532
WORKDIR /data
ENV HOLDCO_DATA_DIR=/data HOLDCO_LOG_FORMAT=json
VOLUME /data
# api, mcp, oauth, sites listeners; the metrics listener when
# HOLDCO_METRICS_ADDR=:9464.
EXPOSE 8080 8081 8082 8083 9464
# The default command serves every role, so the api's /health answers for
# the process; a single-role container passes --role (docker-compose.yml).
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 CMD ["/holdco", "healthcheck"]
ENTRYPOINT ["/holdco"]
CMD ["serve"]
