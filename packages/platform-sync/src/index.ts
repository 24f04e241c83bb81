// @platform/sync: see README.md
