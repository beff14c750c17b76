// Module boundaries of STYLE.md §2, checked by `npm test` and CI.
// Order of dependence: identity ← workspace ← card-hierarchy ← fields ← grouping ← import.
const order = ['identity', 'workspace', 'card-hierarchy', 'fields', 'grouping', 'import'];

const downstreamRules = order.map((mod, i) => ({
  name: `no-upstream-calls-from-${mod}`,
  comment: `${mod} may not depend on modules downstream of it (${order.slice(i + 1).join(', ') || 'none'}); report changes with events instead.`,
  severity: 'error',
  from: { path: `^src/modules/${mod}/` },
  to: { path: `^src/modules/(${order.slice(i + 1).join('|') || '$^'})/` },
}));

module.exports = {
  forbidden: [
    {
      name: 'only-through-index',
      comment: 'Another module is imported only through its index.ts (its public API).',
      severity: 'error',
      from: { path: '^src/modules/([^/]+)/' },
      to: { path: '^src/modules/([^/]+)/.+', pathNot: ['^src/modules/$1/', '^src/modules/[^/]+/index\\.ts$'] },
    },
    {
      name: 'shared-kernel-stands-alone',
      comment: 'The shared kernel holds no business rules and depends on no module.',
      severity: 'error',
      from: { path: '^src/shared/' },
      to: { path: '^src/modules/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...downstreamRules,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '\\.spec\\.ts$' },
  },
};
