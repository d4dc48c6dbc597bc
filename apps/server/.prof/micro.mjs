import Database from 'better-sqlite3';
const db = new Database('/tmp/prof/bench.db', { readonly: true });
db.pragma('cache_size = -65536');
if (process.argv[2]) db.pragma('mmap_size = ' + process.argv[2]);
const cols = '"id","timestamp","session_id","conversation_id","source","source_id","category","type","user_id","description","attributes"';
const qs = {
  max: db.prepare('SELECT max(id) AS top FROM events'),
  page: db.prepare(`SELECT ${cols} FROM events WHERE organization_id = ? ORDER BY timestamp desc, id desc LIMIT 25 OFFSET 0`),
  pageIds: db.prepare(`SELECT id FROM events WHERE organization_id = ? ORDER BY timestamp desc, id desc LIMIT 25 OFFSET 0`),
};
console.log(db.prepare(`EXPLAIN QUERY PLAN SELECT ${cols} FROM events WHERE organization_id = ? ORDER BY timestamp desc, id desc LIMIT 25 OFFSET 0`).all(1));
for (const [name, st] of Object.entries(qs)) {
  const args = name === 'max' ? [] : [1];
  for (let i = 0; i < 2000; i++) st.all(...args);
  const n = 20000; const t = process.hrtime.bigint();
  for (let i = 0; i < n; i++) st.all(...args);
  console.log(name, Number(process.hrtime.bigint() - t) / n / 1000, 'µs');
}
const tx = db.transaction(() => { qs.max.all(); return qs.page.all(1); });
for (let i = 0; i < 2000; i++) tx.deferred();
const n = 20000; const t = process.hrtime.bigint();
for (let i = 0; i < n; i++) tx.deferred();
console.log('tx', Number(process.hrtime.bigint() - t) / n / 1000, 'µs');
