// html_shots.js: opens a report's index.html in headless Chromium at 1,400 px through
// the DevTools protocol, and (1) screenshots the summary, a table after clicking a
// header to sort it (twice: descending) and the roofline into OUTDIR, (2) reports every
// console message of level error/warning, uncaught exception and any request that is
// not a file: or data: URL (the page must be self-contained). Exit 1 on any of those.
//   node --experimental-websocket tests/html_shots.js REPORT_DIR OUTDIR TABLE_ID COLUMN
// (Node >= 20.10 with the flag, or 22 without; chromium on PATH.)
'use strict';
const { spawn } = require('child_process');
const fs = require('fs');
const path = require('path');

const [dir, outdir, tableId, column] = process.argv.slice(2);
if (!dir || !outdir || !tableId) {
	console.error('usage: html_shots.js REPORT_DIR OUTDIR TABLE_ID [COLUMN]');
	process.exit(2);
}
const port = 9300 + (process.pid % 500);
const chrome = spawn('chromium', ['--headless', '--no-sandbox', '--disable-gpu',
	`--remote-debugging-port=${port}`, '--window-size=1400,900', 'about:blank'],
	{ stdio: 'ignore' });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function target() {
	for (let i = 0; i < 100; i++) {
		try {
			const r = await fetch(`http://127.0.0.1:${port}/json/list`);
			const l = await r.json();
			const p = l.find((t) => t.type === 'page');
			if (p) return p.webSocketDebuggerUrl;
		} catch (e) { /* not up yet */ }
		await sleep(200);
	}
	throw new Error('chromium did not start');
}

async function main() {
	const ws = new WebSocket(await target());
	await new Promise((r) => ws.addEventListener('open', r));
	let id = 0;
	const pending = new Map(), problems = [];
	let loaded = null;
	ws.addEventListener('message', (ev) => {
		const m = JSON.parse(ev.data);
		if (m.id && pending.has(m.id)) {
			pending.get(m.id)(m);
			pending.delete(m.id);
		}
		if (m.method === 'Runtime.exceptionThrown')
			problems.push('exception: ' + JSON.stringify(m.params.exceptionDetails.text));
		if (m.method === 'Runtime.consoleAPICalled' && /error|warn/.test(m.params.type))
			problems.push('console ' + m.params.type + ': ' +
				m.params.args.map((a) => a.value).join(' '));
		if (m.method === 'Log.entryAdded' && /error|warning/.test(m.params.entry.level))
			problems.push('log ' + m.params.entry.level + ': ' + m.params.entry.text);
		if (m.method === 'Network.requestWillBeSent' && !/^(file|data|about):/.test(m.params.request.url))
			problems.push('external request: ' + m.params.request.url);
		if (m.method === 'Page.loadEventFired' && loaded) loaded();
	});
	const send = (method, params = {}) => new Promise((r) => {
		pending.set(++id, r);
		ws.send(JSON.stringify({ id, method, params }));
	});
	const shot = async (name) => {
		await sleep(400);
		const r = await send('Page.captureScreenshot', { format: 'png' });
		fs.writeFileSync(path.join(outdir, name), Buffer.from(r.result.data, 'base64'));
		console.log('wrote ' + path.join(outdir, name));
	};
	const js = (expr) => send('Runtime.evaluate', { expression: expr, returnByValue: true });
	for (const d of ['Runtime', 'Log', 'Page', 'Network']) await send(d + '.enable');
	await send('Emulation.setDeviceMetricsOverride',
		{ width: 1400, height: 900, deviceScaleFactor: 1, mobile: false });
	const done = new Promise((r) => { loaded = r; });
	await send('Page.navigate', { url: 'file://' + path.resolve(dir, 'index.html') });
	await done;
	fs.mkdirSync(outdir, { recursive: true });
	await shot('report-summary.png');
	const col = Number(column || 1);
	const sorted = await js(`(function(){var t=document.getElementById('t_${tableId}');
		if(!t)return 'no table';var hs=t.tHead.rows[t.tHead.rows.length-1].cells;
		hs[${col}].click();hs[${col}].click();
		var s=t.closest('section');(s||t).scrollIntoView();
		return hs[${col}].getAttribute('aria-sort')+': '+
			Array.prototype.map.call(t.tBodies[0].rows,function(r){return r.cells[0].textContent+'='+r.cells[${col}].textContent;}).join(', ');})()`);
	console.log('sorted ' + tableId + ' by column ' + col + ' -> ' + sorted.result.result.value);
	await shot('report-sorted-table.png');
	await js(`document.getElementById('plot-roofline').scrollIntoView()`);
	await shot('report-roofline.png');
	const tip = await js(`(function(){var t=Array.prototype.filter.call(
		document.querySelectorAll('#plot-roofline svg g > title'),function(e){return / t=/.test(e.textContent);});
		return t.length+' point tooltips, e.g. '+(t.length?t[0].textContent:'');})()`);
	console.log(tip.result.result.value);
	const urls = await js(`document.documentElement.outerHTML.match(/https?:\\/\\/[^"' )<]+/g)`);
	if (urls.result.result.value) problems.push('URLs in the page: ' + urls.result.result.value.join(' '));
	const ids = await js(`(function(){var s={},d=[];document.querySelectorAll('[id]').forEach(function(e){
		if(s[e.id])d.push(e.id);s[e.id]=1;});return d;})()`);
	if (ids.result.result.value.length) problems.push('duplicate ids: ' + ids.result.result.value.join(' '));
	console.log(problems.length ? problems.join('\n') : 'no console errors, no external request or URL, ids unique');
	ws.close();
	chrome.kill();
	process.exit(problems.length ? 1 : 0);
}
main().catch((e) => { console.error(e); chrome.kill(); process.exit(1); });
