{{/* Chart name, truncated to 63 characters (the DNS-1123 label limit of some name fields). */}}
{{- define "clusterset-agent.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Fully qualified app name: <release>-<chart>, or the release name when it already contains
the chart name. Truncated to 63 characters.
*/}}
{{- define "clusterset-agent.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Chart name and version, for the helm.sh/chart label. */}}
{{- define "clusterset-agent.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels on every object. */}}
{{- define "clusterset-agent.labels" -}}
helm.sh/chart: {{ include "clusterset-agent.chart" . }}
{{ include "clusterset-agent.selectorLabels" . }}
{{- if .Chart.AppVersion }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/*
Selector labels: name and instance only. Deployment selectors are immutable, so anything that
changes between releases (version, chart) must stay out of them.
*/}}
{{- define "clusterset-agent.selectorLabels" -}}
app.kubernetes.io/name: {{ include "clusterset-agent.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Name of the ServiceAccount the agent runs as. */}}
{{- define "clusterset-agent.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "clusterset-agent.fullname" .) .Values.serviceAccount.name }}
{{- else if .Values.serviceAccount.name }}
{{- .Values.serviceAccount.name }}
{{- else }}
{{- fail "serviceAccount.name is required when serviceAccount.create is false: name the existing ServiceAccount the agent runs as" }}
{{- end }}
{{- end }}

{{/*
Name of the cluster-scoped RBAC objects. ClusterRoles are not namespaced, so the release
namespace is part of the name: two releases with the same name in different namespaces
must not share (and then delete) one ClusterRole.
*/}}
{{- define "clusterset-agent.clusterRoleName" -}}
{{- printf "%s-%s" .Release.Namespace (include "clusterset-agent.fullname" .) | trunc 253 | trimSuffix "-" }}
{{- end }}

{{/* Image reference; the tag defaults to the chart's appVersion. */}}
{{- define "clusterset-agent.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* True (non-empty) when the member agent is installed. */}}
{{- define "clusterset-agent.isMember" -}}
{{- if eq .Values.mode "member" }}true{{ end }}
{{- end }}

{{/*
The agent's config file, as YAML. .Values.config as given, plus what the chart derives:
health/metrics bind addresses from the ports, LabelIdentity from importLabelIdentity, the
extra kinds from the import toggles, and leader election when replicas > 1. namespace is
left out: the agent takes it from POD_NAMESPACE (the downward API).
*/}}
{{- define "clusterset-agent.configFile" -}}
{{- $cfg := deepCopy .Values.config }}
{{- if and .Values.metrics.enabled (eq (int .Values.health.port) (int .Values.metrics.port)) }}
{{- fail (printf "health.port and metrics.port are both %d: they must differ" (int .Values.health.port)) }}
{{- end }}
{{- $_ := set $cfg "health" (dict "bindAddress" (printf ":%d" (int .Values.health.port))) }}
{{- $_ := set $cfg "metrics" (dict "bindAddress" (ternary (printf ":%d" (int .Values.metrics.port)) "0" .Values.metrics.enabled)) }}
{{- $imports := default (dict) $cfg.imports }}
{{- $_ := set $cfg "imports" $imports }}
{{- $kinds := list }}
{{- range (default (list "ServiceImport" "Endpoints" "ClusterInfo") $imports.allowedKinds) }}
{{- if and (eq . "AntreaClusterNetworkPolicy") (not $.Values.importACNP) }}
{{- fail "config.imports.allowedKinds lists AntreaClusterNetworkPolicy: set importACNP=true instead (it adds the kind and grants its RBAC)" }}
{{- end }}
{{- if and (eq . "LabelIdentity") (not $.Values.importLabelIdentity) }}
{{- fail "config.imports.allowedKinds lists LabelIdentity: set importLabelIdentity=true instead (it enables the kind and grants its RBAC)" }}
{{- end }}
{{- $kinds = append $kinds . }}
{{- end }}
{{- if .Values.importACNP }}{{ $kinds = append $kinds "AntreaClusterNetworkPolicy" }}{{ end }}
{{- if .Values.importLabelIdentity }}{{ $kinds = append $kinds "LabelIdentity" }}{{ end }}
{{- $_ := set $imports "allowedKinds" ($kinds | uniq) }}
{{- $_ := set $imports "enableLabelIdentity" .Values.importLabelIdentity }}
{{- if gt (int .Values.replicaCount) 1 }}
{{- $_ := set $cfg "leaderElection" (merge (dict "enabled" true) (default (dict) $cfg.leaderElection)) }}
{{- end }}
{{- toYaml $cfg }}
{{- end }}

{{/*
ServiceAccounts of leader.namespace the admission policies exempt, one name per line:
leader.admissionPolicy.exemptServiceAccounts when set; unset (null), Antrea's leader controller
antrea-mc-controller only when this chart's leader controller is off (Antrea's runs instead),
and none when `leader run` is on: then no member-side name is exempt by default.
*/}}
{{- define "clusterset-agent.exemptServiceAccounts" -}}
{{- $names := .Values.leader.admissionPolicy.exemptServiceAccounts }}
{{- if kindIs "invalid" $names }}
{{- $names = ternary (list) (list "antrea-mc-controller") .Values.leader.controller.enabled }}
{{- end }}
{{- join "\n" $names }}
{{- end }}

{{/*
The annotation on each admission policy naming the usernames its CEL exempts, comma-separated:
what `leader create-member-token` reads (EXEMPT_USERNAMES_ANNOTATION in
src/leader/admission-exemptions.ts; chart.test.ts checks the two spellings and the CEL agree).
*/}}
{{- define "clusterset-agent.exemptUsernamesAnnotation" -}}
multicluster.clusterset-agent.io/exempt-usernames
{{- end }}

{{/*
CEL: whether the caller, a ServiceAccount of leader.namespace, has a member-ID entry in the
parameter ConfigMap. Such a ServiceAccount is a member and is never exempt, whatever the list says.
*/}}
{{- define "clusterset-agent.callerHasMemberID" -}}
{{- $saPrefix := printf "system:serviceaccount:%s:" .Values.leader.namespace -}}
{{- printf "(request.userInfo.username.startsWith('%s') && params.?data[?request.userInfo.username.substring(size('%s'))].hasValue())" $saPrefix $saPrefix -}}
{{- end }}
