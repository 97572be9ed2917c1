# syntax=docker/dockerfile:1
# The image of "volbind controller", published as ghcr.io/volbind/volbind:<tag>:
#
#   docker build --build-arg VERSION=v0.1.0 --build-arg GIT_COMMIT=$(git rev-parse HEAD) \
#     --build-arg SOURCE_DATE_EPOCH=$(git log -1 --format=%ct) -t ghcr.io/volbind/volbind:v0.1.0 .
#
# A static binary (hack/build-volbind.sh: CGO_ENABLED=0, -trimpath, the version
# stamped where --version reads it) on distroless/static, as user 65532
# (nonroot). It writes nothing to disk: run it with readOnlyRootFilesystem
# (examples/controller/base/deployment.yaml).
ARG GO_VERSION=1.26

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG VERSION=v0.0.0-unreleased
ARG GIT_COMMIT=""
ARG SOURCE_DATE_EPOCH=0
ARG TARGETOS=linux
ARG TARGETARCH=amd64
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
	GOOS=$TARGETOS GOARCH=$TARGETARCH GIT_COMMIT=$GIT_COMMIT SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH \
	hack/build-volbind.sh /out/volbind "$VERSION"

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/volbind /usr/local/bin/volbind
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/volbind"]
CMD ["controller"]
