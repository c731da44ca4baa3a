/**
 * The live status page (`GET /` on the health listener): one self-contained HTML document, no external asset
 * and no framework. A small inline script reads `/status.json` every second and redraws; the countdown to
 * each armed deadline ticks locally between reads (corrected by the server's clock). docs/observability.md
 * "Status page" describes what it shows.
 */
export const STATUS_PAGE_CSP =
  "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const STYLE = `
:root{--ok:#1a7f37;--warn:#b76e00;--bad:#cf222e;--idle:#6e7781;--bg:#f6f8fa;--fg:#1f2328;--card:#fff;--line:#d0d7de}
*{box-sizing:border-box}body{margin:0;font:14px/1.45 "DejaVu Sans",system-ui,sans-serif;background:var(--bg);color:var(--fg)}
header{display:flex;align-items:center;gap:16px;padding:14px 24px;background:#24292f;color:#fff}
header h1{font-size:18px;margin:0;font-weight:600}header .meta{margin-left:auto;font-size:12px;opacity:.8}
#ready{padding:3px 10px;border-radius:12px;font-weight:700;font-size:12px;letter-spacing:.04em}
main{padding:16px 24px;display:grid;gap:16px}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:16px}
.head{display:flex;align-items:center;gap:12px;flex-wrap:wrap}
.addr{font-family:"DejaVu Sans Mono",monospace;font-size:13px}
.state{color:#fff;font-weight:700;padding:4px 12px;border-radius:6px;letter-spacing:.03em}
.ok{background:var(--ok)}.warn{background:var(--warn)}.bad{background:var(--bad)}.idle{background:var(--idle)}
.countdown{margin-left:auto;font:700 28px/1 "DejaVu Sans Mono",monospace}.countdown small{font:400 12px "DejaVu Sans",system-ui,sans-serif;opacity:.7;display:block;text-align:right;margin-top:4px}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(210px,1fr));gap:10px 24px;margin-top:14px}
.k{font-size:11px;text-transform:uppercase;letter-spacing:.05em;color:var(--idle)}.v{font-weight:600}
table{border-collapse:collapse;width:100%;margin-top:12px;font-size:13px}th,td{padding:5px 8px;border-bottom:1px solid var(--line);text-align:right}
th:first-child,td:first-child{text-align:left}th{font-size:11px;text-transform:uppercase;color:var(--idle);font-weight:600}
td.near{color:var(--bad);font-weight:700}td.mid{color:var(--warn);font-weight:600}
#reasons{margin:0 0 12px;padding-left:18px;color:var(--bad)}#reasons:empty{display:none}
.err{color:var(--bad)}.v.near{color:var(--bad)}.v.mid{color:var(--warn)}.guard-bad{color:var(--bad)}.guard-warn{color:var(--warn)}footer{padding:0 24px 16px;font-size:12px;color:var(--idle)}
`;

const SCRIPT = `
"use strict";
var data=null, offset=0, failed=0, pageNo=1;
var STATES={armed:["PROTECTED","ok"],retrying:["RETRYING","warn"],starting:["STARTING","idle"],
 lapsed:["LAPSED - TRIGGER","bad"],exhausted:["NOT PROTECTED - TRIGGER LIMIT","bad"],
 not_protected:["NOT PROTECTED","bad"],engine_down:["ENGINE DOWN","bad"],stopped:["STOPPED","idle"]};
function h(tag,attrs){var el=document.createElement(tag);if(attrs)for(var k in attrs){if(k==="text")el.textContent=attrs[k];else el.setAttribute(k,attrs[k]);}
 for(var i=2;i<arguments.length;i++){var c=arguments[i];if(c==null)continue;el.appendChild(typeof c==="string"?document.createTextNode(c):c);}return el;}
function now(){return Date.now()+offset;}
function dur(ms){if(ms==null)return "-";var s=Math.abs(ms)/1000,sign=ms<0?"-":"";if(s<120)return sign+s.toFixed(1)+" s";
 var m=Math.floor(s/60);if(m<120)return sign+m+" min "+Math.floor(s%60)+" s";return sign+Math.floor(m/60)+" h "+(m%60)+" min";}
function clock(ms){return ms?new Date(ms).toISOString().slice(11,19)+" UTC":"-";}
function usd(v){if(v==null)return "-";var n=Number(v);return isFinite(n)?n.toLocaleString("en-US",{maximumFractionDigits:2})+" USD":String(v);}
function num(v){if(v==null||v==="")return "-";var n=Number(v);if(!isFinite(n))return String(v);var a=Math.abs(n);
 return n.toLocaleString("en-US",{maximumFractionDigits:a>=100?2:a>=1?4:6});}
function kv(k,v,id){var d=h("div",null,h("div",{"class":"k",text:k}),h("div",{"class":"v",text:v}));if(id)d.lastChild.setAttribute("data-field",id);return d;}
function stateOf(a){if(a.halted)return ["HALTED - "+a.halted.reason,"bad"];var s=STATES[a.state]||[a.state,"idle"],label=s[0],cls=s[1];
 if(a.state==="not_protected"&&a.notProtectedReason)label+=" ("+a.notProtectedReason+")";
 if((a.state==="armed"||a.state==="retrying")&&a.armedUntil!=null&&a.armedUntil-now()<data.marginMs){label="PROTECTION LOW";cls="bad";}
 return [label,cls];}
function exposureTable(x){if(!x)return h("p",{"class":"k",text:"no exposure poll yet"});
 var t=h("table",{"data-exposure":"1"},h("tr",null,h("th",{text:"coin"}),h("th",{text:"size"}),h("th",{text:"value"}),h("th",{text:"mark"}),h("th",{text:"liq. price"}),h("th",{text:"to liquidation"})));
 x.positions.forEach(function(p){var d=p.liquidationDistancePct;var c=d==null?"":d<5?"near":d<15?"mid":"";
  t.appendChild(h("tr",{"data-coin":p.coin},h("td",{text:p.coin+(p.dex?" ("+p.dex+")":"")}),h("td",{text:num(p.szi)}),h("td",{text:usd(p.positionValue)}),
   h("td",{text:num(p.markPx)}),h("td",{text:p.liquidationPx?num(p.liquidationPx):"none"}),h("td",{"class":c,text:d==null?"cannot be liquidated":d.toFixed(2)+" %"})));});
 if(!x.positions.length)t.appendChild(h("tr",null,h("td",{colspan:"6",text:"no open position"})));
 return h("div",null,h("div",{"class":"grid"},kv("account value",usd(x.accountValue)),kv("total notional",usd(x.totalNtlPos)),
  kv("leverage",x.leverage==null?"-":x.leverage.toFixed(2)+"x"),kv("polled",clock(x.at))),t);}
var ENGINES={up:["up (connected)",""],waiting:["WAITING: no engine has connected for this account since the daemon started","mid"],
 detached:["detached: a planned restart, up until its grace ends","mid"],down:["DOWN","near"]};
function engineKv(a){if(a.engine==null)return null;var e=ENGINES[a.engine]||[a.engine,""];var d=kv("engine",e[0],"engine");if(e[1])d.lastChild.className="v "+e[1];return d;}
function ordersKv(a){var o=a.openOrders,v;
 if(!data.openOrdersRead)v="not read (more than 10 accounts, or no exposure poll: the IP's weight)";
 else if(!o)v="not read yet";
 else{var kinds=[];if(o.trigger)kinds.push(o.trigger+" trigger (stop / take-profit)");if(o.reduceOnly)kinds.push(o.reduceOnly+" reduce-only");
  v=o.total===0?"none":o.total+" order"+(o.total===1?"":"s")+(kinds.length?" ("+kinds.join(", ")+")":"")+": a fire cancels all";}
 return kv("open orders",v,"open-orders");}
function card(a){var st=stateOf(a);var left=a.armedUntil==null?null:a.armedUntil-now();
 var c=h("section",{"class":"card","data-account":a.account,"data-state":a.state},
  h("div",{"class":"head"},h("span",{"class":"addr",text:a.account}),h("span",{"class":"state "+st[1],"data-field":"state",text:st[0]}),
   h("div",{"class":"countdown"},h("span",{"data-field":"countdown","data-deadline":a.armedUntil==null?"":String(a.armedUntil),text:left==null?"not armed":dur(left)}),
    h("small",{text:a.armedUntil==null?"no deadline armed":"until the cancel fires at "+clock(a.armedUntil)}))),
  h("div",{"class":"grid"},
   kv("triggers today",a.triggersToday+" used / "+a.triggersLeft+" left (limit "+a.triggerLimit+")","triggers"),
   kv("next reset",clock(data.nextResetAt)+" (in "+dur(data.nextResetAt-now())+")"),
   kv("last push",a.lastPushAt?clock(a.lastPushAt)+" ("+dur(now()-a.lastPushAt)+" ago)":"none yet"),
   kv("push latency",a.lastLatencyMs==null?"-":Math.round(a.lastLatencyMs)+" ms"),
   kv("consecutive failures",String(a.consecutiveFailures),"failures"),
   kv("last error",a.lastError?a.lastError.kind+": "+a.lastError.message:"none"),
   kv("exchange time",a.clockUnverified?"NOT VERIFIED: no two witnesses agree yet (not ready)":a.clockSuspect?"verified; the local clock is "+(a.clockOffMs==null?"more than 5 s":(a.clockOffMs/1000).toFixed(1)+" s")+" off it, beyond clock.suspect (not ready)":"verified"),ordersKv(a),engineKv(a)),
  exposureTable(a.exposure));
 return c;}
function render(){if(!data)return;var r=document.getElementById("ready");r.textContent=data.ready?"READY":"NOT READY";r.className=data.ready?"ok":"bad";
 var rs=document.getElementById("reasons");rs.textContent="";data.reasons.forEach(function(x){rs.appendChild(h("li",{text:x}));});
 if(data.reasonsOmitted)rs.appendChild(h("li",{text:"and "+data.reasonsOmitted+" more"}));
 var s=data.summary,pg=data.paging;document.getElementById("summary").textContent=s.accounts+" account(s): "+(s.attention?s.attention+" need attention ("+s.halted+" halted, "+s.notProtected+" not protected, "+s.notArmed+" not armed, "+s.lowMargin+" low margin), listed first":"all armed")+(pg.pages>1?" · page "+pg.page+" of "+pg.pages:"");
 document.getElementById("prev").disabled=pg.page<=1;document.getElementById("next").disabled=pg.page>=pg.pages;document.getElementById("pager").hidden=pg.pages<=1;
 var gv=data.guardView,ge=document.getElementById("guard");ge.textContent=gv.text;ge.className="v guard-"+gv.level;
 var co=data.coordination,ce=document.getElementById("coordination");ce.parentNode.hidden=!co;if(co)ce.textContent=(co.role==="leader"?"holds the lease (token "+co.token+")":co.role==="follower"?"follower: "+(co.detail||"another replica holds the lease"):"ETCD UNREACHABLE: "+(co.detail||"")+(co.actAlone?" (acting alone)":" (no gated action)"))+" · "+co.candidates.length+" other candidate(s)"+(co.settingsDiffer?" · SETTINGS DIFFER":"");
 document.getElementById("skew").textContent=data.clockSkewMs==null?"unknown":(data.clockSkewMs/1000).toFixed(3)+" s"+(Math.abs(data.clockSkewMs)>data.clockSkewWarnMs?" (above the "+(data.clockSkewWarnMs/1000)+" s warning)":"");
 document.getElementById("version").textContent="hl-deadman "+data.version+" · "+data.network;
 var list=document.getElementById("accounts");list.textContent="";data.accounts.forEach(function(a){list.appendChild(card(a));});
 var au=document.getElementById("audit");au.textContent="";if(data.audit){var at=h("table",{"data-audit":"1"},h("tr",null,h("th",{text:"#"}),h("th",{text:"time"}),h("th",{text:"event"}),h("th",{text:"account"})));
  data.audit.last.forEach(function(x){at.appendChild(h("tr",null,h("td",{text:String(x.sequence)}),h("td",{text:x.time.slice(0,19).replace("T"," ")+" UTC"}),h("td",{text:x.type.replace(/^xyz.hl-deadman./,"")}),h("td",{"class":"addr",text:x.account||"-"})));});
  au.appendChild(h("div",{"class":"k",text:"audit trail: "+data.audit.sequence+" records, newest hash "+data.audit.hash.slice(0,16)+"… (hl-deadman audit verify)"}));au.appendChild(at);}}
function tick(){var els=document.querySelectorAll("[data-field=countdown]");for(var i=0;i<els.length;i++){var d=els[i].getAttribute("data-deadline");if(d)els[i].textContent=dur(Number(d)-now());}}
function go(d){pageNo=Math.max(1,pageNo+d);load();}
function load(){var x=new XMLHttpRequest();x.open("GET","status.json?page="+pageNo);x.timeout=5000;
 x.onload=function(){try{var d=JSON.parse(x.responseText);offset=d.now-Date.now();data=d;failed=0;render();document.getElementById("conn").textContent="updated "+clock(d.now);}catch(e){fail();}};
 x.onerror=x.ontimeout=fail;x.send();}
function fail(){failed++;var c=document.getElementById("conn");c.textContent="cannot reach the daemon ("+failed+" failed read(s)); the figures below are stale";c.className="err";}
document.getElementById("prev").onclick=function(){go(-1);};document.getElementById("next").onclick=function(){go(1);};
load();setInterval(load,1000);setInterval(tick,200);
`;

export const STATUS_PAGE_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>hl-deadman status</title><style>${STYLE}</style></head>
<body><header><h1>hl-deadman</h1><span id="ready" class="idle">LOADING</span><span class="meta"><span id="version"></span> · <span id="conn">loading…</span></span></header>
<main>
<section class="card"><div class="v" id="summary" data-field="summary">-</div><div id="pager" hidden><button id="prev">previous</button> <button id="next">next</button></div><ul id="reasons"></ul><div class="grid" style="margin-top:0">
<div><div class="k">engine guard</div><div class="v" id="guard">-</div></div>
<div hidden><div class="k">coordination (etcd)</div><div class="v" id="coordination">-</div></div>
<div><div class="k">clock skew (local - exchange)</div><div class="v" id="skew">-</div></div>
</div></section>
<div id="accounts"></div>
<section class="card" id="audit"></section>
</main>
<footer>Refreshes every second from <a href="status.json">status.json</a> · <a href="readyz">readyz</a> · <a href="metrics">metrics</a></footer>
<script>${SCRIPT}</script></body></html>
`;
