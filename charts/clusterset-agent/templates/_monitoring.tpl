{{/* Fails unless the agent serves metrics: (list $ "the.value.that.needs.them"). */}}
{{- define "clusterset-agent.requireMetrics" -}}
{{- $ := index . 0 }}
{{- if not $.Values.metrics.enabled }}
{{- fail (printf "%s needs metrics.enabled=true: with metrics disabled the agent serves no /metrics" (index . 1)) }}
{{- end }}
{{- end }}

{{/* True (non-empty) when the metrics Service is rendered: asked for, or needed by the ServiceMonitor. */}}
{{- define "clusterset-agent.metricsService" -}}
{{- if or .Values.metrics.service.enabled .Values.metrics.serviceMonitor.enabled }}
{{- include "clusterset-agent.requireMetrics" (list . (ternary "metrics.service.enabled" "metrics.serviceMonitor.enabled" .Values.metrics.service.enabled)) }}
{{- print "true" }}
{{- end }}
{{- end }}

{{/* Name of the metrics Service. */}}
{{- define "clusterset-agent.metricsServiceName" -}}
{{- printf "%s-metrics" (include "clusterset-agent.fullname" . | trunc 55 | trimSuffix "-") }}
{{- end }}

{{/*
PromQL selector of this release's agents: the namespace label Prometheus gives targets found
through the ServiceMonitor / PodMonitor (the release namespace).
*/}}
{{- define "clusterset-agent.alertSelector" -}}
{{- printf "{namespace=%q}" .Release.Namespace }}
{{- end }}

{{/*
True when a counter grew by at least `min` within `window`, per `by` labels; also for a series
that appeared within the window (a labelled counter is only exported from its first increment,
which increase() cannot see): (list "metric_total" "{selector}" "15m" "by (labels)" min).
*/}}
{{- define "clusterset-agent.grewBy" -}}
{{- $m := index . 0 }}{{ $sel := index . 1 }}{{ $w := index . 2 }}{{ $by := index . 3 }}{{ $min := index . 4 -}}
(sum {{ $by }} (increase({{ $m }}{{ $sel }}[{{ $w }}])) >= {{ $min }})
or
(sum {{ $by }} ({{ $m }}{{ $sel }} unless {{ $m }}{{ $sel }} offset {{ $w }}) >= {{ $min }})
{{- end }}

{{/* True (non-empty) when this release runs a process that serves metrics: the member agent, or `leader run` in mode=leader. */}}
{{- define "clusterset-agent.monitored" -}}
{{- if or (include "clusterset-agent.isMember" .) (and (eq .Values.mode "leader") .Values.leader.controller.enabled) }}true{{ end }}
{{- end }}

{{/* The labels of the Pods that serve metrics: the agent's, or in mode=leader the leader controller's. */}}
{{- define "clusterset-agent.metricsPodLabels" -}}
{{ include "clusterset-agent.selectorLabels" . }}
{{- if not (include "clusterset-agent.isMember" .) }}
app.kubernetes.io/component: leader
{{- end }}
{{- end }}
