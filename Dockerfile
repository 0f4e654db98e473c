# placementd (and placectl) on Debian 12.
#
#   docker build -t placement .
#   docker compose up        # with PostgreSQL and Prometheus, see docker-compose.yml
#
# The build stage installs its toolchain with scripts/install-deps, the same
# script as the quick start, so the image and a developer machine build with
# the same Debian packages. The runtime stage carries only the shared
# libraries the binaries link against.

FROM debian:bookworm AS build
# install-deps first, on its own, so that editing sources does not re-run it.
COPY scripts/install-deps /src/scripts/install-deps
RUN /src/scripts/install-deps && rm -rf /var/lib/apt/lists/*
COPY . /src
WORKDIR /src
RUN cmake -S /src -B /src/build/release -DCMAKE_BUILD_TYPE=Release \
      -DBUILD_TESTING=OFF -DPLACEMENT_BUILD_BENCH=OFF \
 && targets=placementd \
 && if cmake --build /src/build/release --target help | grep -qw placectl; then \
      targets="$targets placectl"; \
    fi \
 && cmake --build /src/build/release -j"$(nproc)" --target $targets \
 && mkdir -p /out/bin \
 && install -m 0755 /src/build/release/services/placementd /out/bin/ \
 && if [ -x /src/build/release/clients/placectl ]; then \
      install -m 0755 /src/build/release/clients/placectl /out/bin/; \
    fi \
 && strip /out/bin/*

FROM debian:bookworm-slim AS runtime
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      ca-certificates \
      libabsl20220623 \
      libgrpc++1.51 libgrpc29 \
      libprotobuf32 \
      libpqxx-6.4 libpq5 \
      libprometheus-cpp-core1.0 libprometheus-cpp-pull1.0 \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --no-create-home --shell /usr/sbin/nologin placement
COPY --from=build /out/bin/ /usr/local/bin/
# Fail the build, not the first start, if a shared library is missing.
RUN for b in /usr/local/bin/*; do \
      if ldd "$b" | grep 'not found'; then echo "missing libraries for $b" >&2; exit 1; fi; \
    done
USER placement
# gRPC and Prometheus /metrics.
EXPOSE 50051 9464
# DATABASE_URL comes from the environment (see docker-compose.yml); run
# `placementd migrate up` once before serving.
CMD ["placementd", "--listen", "0.0.0.0:50051", "--metrics_listen", "0.0.0.0:9464"]
