# syntax=docker/dockerfile:1
# Backpressure game server: a static Go binary on a distroless, non-root base.
#   docker build -t backpressure .
#   docker run -p 8080:8080 -e DATABASE_URL=postgres://... backpressure
# Without DATABASE_URL the server keeps everything in memory (and says so).

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/server ./cmd/server

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/server /server
ENV PORT=8080
EXPOSE 8080
USER nonroot:nonroot
# The binary probes itself: distroless has no shell or curl.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 CMD ["/server", "healthcheck"]
# SIGTERM drains in-flight requests for up to SHUTDOWN_TIMEOUT (30s by default).
STOPSIGNAL SIGTERM
ENTRYPOINT ["/server"]
