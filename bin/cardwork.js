#!/usr/bin/env node
// The CLI runs from the build (npm install builds it through `prepare`).
import '../dist/src/cli/main.js';
