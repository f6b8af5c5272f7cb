# The ttld image: the static binary alone, nothing to pull. Build it with `make image`,
# which compiles bin/ttld with CGO_ENABLED=0 first; .dockerignore keeps the build
# context down to that one file.
#
# The node's home is not in the image: mount a writable directory at /home/.ttld (the
# default --home, as HOME is /home), one per node, as docker-compose.yml does. The
# container runs as whatever user `docker run --user` / compose's `user:` gives, so the
# files it writes into the mounted home belong to that user on the host.
FROM scratch
COPY bin/ttld /bin/ttld
ENV HOME=/home
# 26656 P2P, 26657 RPC, 26660 Prometheus (addresses set in the home's config.toml).
EXPOSE 26656 26657 26660
ENTRYPOINT ["/bin/ttld"]
CMD ["start"]
