// Builds core/src/context/traffic/session.json: a realistic tool-heavy session over this
// repository's own files, each request counted with the o200k_base tokenizer.
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import fs from 'node:fs';
import { execSync } from 'node:child_process';

const repo = process.argv[2];
const out = process.argv[3];
const tools = JSON.parse(fs.readFileSync('/tmp/ctx-tok/tools.json', 'utf8'));
const system = fs.readFileSync('/tmp/ctx-tok/prompt.txt', 'utf8') +
  '\n\nYou are working in /home/dev/hrns on linux. Today is 2026-12-01.\nTools: read_file, list_files, write_file, edit_file, run_command, web_fetch, grep, task.';
const task = 'The session loses the user\'s task when the history is compacted. Read the history and context modules, find where the latest user message is kept, and explain what would need to change. Run the tests first.';

const numbered = (text) => text.split('\n').map((l, i) => `${String(i + 1).padStart(6)}\t${l}`).join('\n');
const read = (p, max) => { const t = fs.readFileSync(`${repo}/${p}`, 'utf8'); return numbered(t.slice(0, max)); };
const sh = (cmd) => execSync(cmd, { cwd: repo, encoding: 'utf8', maxBuffer: 1 << 24 });

const steps = [
  ['I will run the tests of the core first.', 'run_command', { command: 'cargo test -p hrns-core 2>&1 | tail -60' },
    'exit code 0\n' + fs.readFileSync('/tmp/context-land.log', 'utf8').split('\n').filter(l => l.startsWith('test ')).slice(0, 120).join('\n')],
  ['', 'list_files', { dir: 'core/src' }, sh('git ls-files core/src')],
  ['Let me read the history checks.', 'read_file', { path: 'core/src/history.rs' }, read('core/src/history.rs', 9000)],
  ['', 'grep', { pattern: 'fn compacted_history', path: 'core/src' }, sh('git grep -n "fn \\|pub fn" -- core/src/context | head -40')],
  ['Now the compaction module.', 'read_file', { path: 'core/src/context/compact.rs' }, read('core/src/context/compact.rs', 12000)],
  ['', 'read_file', { path: 'README.md', offset: 140, limit: 60 }, numbered(fs.readFileSync(`${repo}/README.md`, 'utf8').split('\n').slice(140, 200).join('\n'))],
  ['The estimate lives here.', 'read_file', { path: 'core/src/context/estimate.rs' }, read('core/src/context/estimate.rs', 7000)],
  ['', 'run_command', { command: 'git log --oneline -30' }, 'exit code 0\n' + sh('git log --format="%h %s" -30')],
  ['', 'read_file', { path: 'core/src/context/overflow.rs' }, read('core/src/context/overflow.rs', 8000)],
  ['I have what I need; one more look at the pruning.', 'read_file', { path: 'core/src/context/prune.rs' }, read('core/src/context/prune.rs', 6000)],
];

const t = (s) => encode(s).length;
const toolTokens = t(JSON.stringify(tools)) + 12;
const msgTokens = (m) => {
  let n = 3 + t(m.role) + t(m.content || '');
  for (const c of m.tool_calls || []) n += 3 + t(c.id) + t(c.function.name) + t(c.function.arguments);
  if (m.tool_call_id) n += t(m.tool_call_id);
  return n;
};
const messages = [{ role: 'system', content: system }, { role: 'user', content: task }];
const count = () => 3 + toolTokens + messages.reduce((a, m) => a + msgTokens(m), 0);
const recorded = [];
steps.forEach(([text, name, args, output], i) => {
  const id = `call_${i}`;
  const assistant = { role: 'assistant', content: text || null, tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }] };
  recorded.push({ prompt_tokens: count(), assistant, outputs: { [id]: output } });
  messages.push(assistant, { role: 'tool', tool_call_id: id, content: output });
});
recorded.push({ prompt_tokens: count(), assistant: { role: 'assistant', content: 'The latest user message is kept verbatim by compacted_history; earlier ones are quoted in the summary.' }, outputs: {} });
fs.writeFileSync(out, JSON.stringify({
  about: 'A tool-heavy session over hrns\'s own files; prompt_tokens counted with o200k_base (npm gpt-tokenizer 2) as OpenAI counts chat requests: 3 per message plus role and content, tool calls, the tools JSON, 3 to prime the answer.',
  system, task, steps: recorded }, null, 1) + '\n');
console.log(recorded.map(r => r.prompt_tokens).join(' '));
