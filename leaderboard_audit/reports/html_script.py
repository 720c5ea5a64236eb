"""The one inline script of the HTML report: search, sort and page the tables.

Allowed by the Content-Security-Policy through its SHA-256 hash (no 'unsafe-inline'),
so the file stays self-contained and fetches nothing. Without the script every row is
shown; with it a table over ``PAGE`` rows gets a search box, page buttons and
clickable headers (numeric columns sort as numbers), and an in-page link to a row
(``#model-...``, "What is known per model") turns to the row's page and scrolls to it.
"""

from __future__ import annotations

import base64
import hashlib

PAGE = 25

SCRIPT = """
(function(){
var PAGE=__PAGE__;
function num(t){var v=parseFloat(t.replace(/[^0-9eE.+-]/g,''));return isNaN(v)?null:v;}
document.querySelectorAll('table.dt').forEach(function(tb){
var body=tb.tBodies[0];if(!body)return;var all=Array.prototype.slice.call(body.rows);
var rows=all,page=0,dir={};
var bar=document.createElement('div');bar.className='dt-bar';
var q=document.createElement('input');q.type='search';q.placeholder='search rows';q.setAttribute('aria-label','search rows');
var prev=document.createElement('button');prev.textContent='\\u2190';prev.type='button';
var next=document.createElement('button');next.textContent='\\u2192';next.type='button';
var info=document.createElement('span');
bar.appendChild(q);bar.appendChild(prev);bar.appendChild(next);bar.appendChild(info);
tb.parentNode.insertBefore(bar,tb);
function show(){var n=rows.length,pages=Math.max(1,Math.ceil(n/PAGE));if(page>=pages)page=pages-1;if(page<0)page=0;
all.forEach(function(r){r.hidden=true;});
rows.slice(page*PAGE,page*PAGE+PAGE).forEach(function(r){r.hidden=false;body.appendChild(r);});
info.textContent=' rows '+(n?page*PAGE+1:0)+'-'+Math.min(n,page*PAGE+PAGE)+' of '+n+(n<all.length?' (filtered from '+all.length+')':'');
prev.disabled=page===0;next.disabled=page>=pages-1;}
q.addEventListener('input',function(){var s=q.value.toLowerCase();
rows=all.filter(function(r){return r.textContent.toLowerCase().indexOf(s)>=0;});page=0;show();});
prev.addEventListener('click',function(){page--;show();});
next.addEventListener('click',function(){page++;show();});
Array.prototype.forEach.call(tb.tHead.rows[0].cells,function(th,c){th.style.cursor='pointer';th.title='sort';
th.addEventListener('click',function(){var d=dir[c]=-(dir[c]||-1);
rows=rows.slice().sort(function(a,b){var x=a.cells[c]?a.cells[c].textContent:'',y=b.cells[c]?b.cells[c].textContent:'';
var nx=num(x),ny=num(y);if(nx!==null&&ny!==null)return d*(nx-ny);return d*x.localeCompare(y);});
rows.forEach(function(r){body.appendChild(r);});page=0;show();});});
body.reveal=function(r){if(rows.indexOf(r)<0){q.value='';rows=all;}page=Math.floor(rows.indexOf(r)/PAGE);show();};
show();});
function go(){var h=location.hash.slice(1);if(!h)return;var r=document.getElementById(h);if(!r)return;
var b=r.parentNode;if(b&&b.reveal&&r.hidden)b.reveal(r);r.scrollIntoView();}
window.addEventListener('hashchange',go);
document.addEventListener('click',function(ev){var a=ev.target.closest&&ev.target.closest('a[href^="#"]');
if(a&&a.getAttribute('href')===location.hash)setTimeout(go,0);});
go();
})();
""".replace("__PAGE__", str(PAGE))

SCRIPT_HASH = "sha256-" + base64.b64encode(hashlib.sha256(SCRIPT.encode()).digest()).decode()

__all__ = ["PAGE", "SCRIPT", "SCRIPT_HASH"]
