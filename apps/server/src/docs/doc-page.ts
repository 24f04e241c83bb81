/** The frame of the server's small documentation pages (errors, deprecations): one look, one place. */
export function docPage(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${title}</title>
  <style>
    body { font: 16px/1.5 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; }
    table { border-collapse: collapse; }
    th, td { text-align: left; vertical-align: top; padding: .5rem; border-bottom: 1px solid #ddd; }
    tr:target { background: #fff6d5; }
  </style>
</head>
<body>
${body}</body>
</html>
`;
}
