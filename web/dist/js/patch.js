// applyPatch applies a JSON Patch (RFC 6902: add, replace, remove) to a copy of doc. The
// fix hint sends its change as a patch against the design it was given.
import { clone } from './util.js';

export function applyPatch(doc, ops) {
  let root = clone(doc);
  for (const op of ops || []) root = applyOp(root, op);
  return root;
}

function applyOp(root, op) {
  if (!op.path?.startsWith('/')) throw new Error(`patch path ${op.path} must start with /`);
  const tokens = op.path.slice(1).split('/').map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
  const last = tokens.pop();
  let node = root;
  for (const t of tokens) {
    if (node === null || typeof node !== 'object') throw new Error(`patch path ${op.path} does not exist`);
    if (Array.isArray(node)) node = node[Number(t)];
    else {
      if (!(t in node)) {
        if (op.op !== 'add') throw new Error(`patch path ${op.path} does not exist`);
        node[t] = {};
      }
      node = node[t];
    }
  }
  if (node === null || typeof node !== 'object') throw new Error(`patch path ${op.path} does not exist`);
  const value = op.value === undefined ? undefined : clone(op.value);
  if (Array.isArray(node)) {
    const i = last === '-' ? node.length : Number(last);
    if (!Number.isInteger(i) || i < 0 || i > node.length) throw new Error(`patch index ${last} is out of range`);
    if (op.op === 'add') node.splice(i, 0, value);
    else if (op.op === 'replace') node[i] = value;
    else if (op.op === 'remove') node.splice(i, 1);
    else throw new Error(`unsupported patch op ${op.op}`);
  } else if (op.op === 'add' || op.op === 'replace') {
    node[last] = value;
  } else if (op.op === 'remove') {
    delete node[last];
  } else {
    throw new Error(`unsupported patch op ${op.op}`);
  }
  return root;
}
