# The API server image, for docker-compose.yml (the scale-out deployment). Builds the workspace
# and runs the compiled server; configuration comes from the environment (see README).
FROM node:24-bookworm
RUN npm install -g pnpm@10.34.9
WORKDIR /app
COPY . .
# Node 24 LTS, as .nvmrc. better-sqlite3 is a prebuilt Node-API binary: nothing compiles here.
RUN pnpm install --frozen-lockfile && pnpm turbo run build --filter=@platform/server... --filter=@platform/portal
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000
EXPOSE 3000
# --max-semi-space-size=16: V8 sizes the young generation from the host's memory (2 × 64 MiB on a
# 24 GB host); 16 MiB semi-spaces keep about 150 MiB less resident at the same CPU per request
# (bench/README.md, "memory"). Keep in step with apps/server's `start` script.
CMD ["node", "--max-semi-space-size=16", "apps/server/dist/main.js"]
