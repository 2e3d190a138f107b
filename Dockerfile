# lws-sim in a container, for fuzz campaigns spread over a cluster (deploy/fuzz-job.yaml).
# Build: docker build -t lws-sim .   Run: docker run --rm lws-sim fuzz --reconciler all-fixed --time 60s
FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p lws-sim

FROM debian:bookworm-slim
COPY --from=build /src/target/release/lws-sim /usr/local/bin/lws-sim
COPY --from=build /src/scenarios /scenarios
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/lws-sim"]
