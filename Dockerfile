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
# V8's heap, sized for a server whose live heap is about 50 MiB (bench/README.md, "memory"):
# --max-semi-space-size=16: V8 sized the young generation from the host's memory (2 × 64 MiB on
# a 24 GB host); --max-old-space-size=1024: below 2 GiB, V8 lets the old space grow to a smaller
# multiple of the live heap before it collects (from 2 GiB on, four times it). Together RSS holds
# at about 210 MiB under load instead of 480. 512 held it as well but cost about 10 % more CPU on
# a list request (more full collections; bench/README.md, "the growth was SQLite's page cache").
# A heap that outgrows 1 GiB ends the process (heap out of memory): raise it with the
# deployment's memory.
# Keep in step with apps/server's `start` script. Set as NODE_OPTIONS so a deployment can override
# them (`docker run -e NODE_OPTIONS=--max-old-space-size=2048 …`) without rebuilding the image.
ENV NODE_OPTIONS="--max-semi-space-size=16 --max-old-space-size=1024"
CMD ["node", "apps/server/dist/main.js"]
