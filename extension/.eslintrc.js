// Lint rules for the extension's TypeScript (`npm run lint`: the type check, then these).
module.exports = {
  root: true,
  parser: '@typescript-eslint/parser',
  parserOptions: { project: 'tsconfig.json', sourceType: 'module', tsconfigRootDir: __dirname },
  plugins: ['@typescript-eslint'],
  extends: ['eslint:recommended', 'plugin:@typescript-eslint/recommended'],
  rules: {
    '@typescript-eslint/no-explicit-any': 'error',
    '@typescript-eslint/no-floating-promises': 'error',
    eqeqeq: ['error', 'smart'],
    curly: ['error', 'all'],
    'prefer-const': 'error'
  },
  ignorePatterns: ['lib/', 'node_modules/', '*.js']
};
