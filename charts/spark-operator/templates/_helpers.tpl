{{/* Name of the chart, for labels. */}}
{{- define "spark-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Prefix of every resource name. Kept to 40 characters so that the longest derived name
(<fullname>-webhook-certs) stays a valid DNS label.
*/}}
{{- define "spark-operator.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "spark-operator.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "spark-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Selector labels of a component: include with (dict "ctx" $ "component" "controller"). */}}
{{- define "spark-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "spark-operator.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "spark-operator.image" -}}
{{- $tag := default .Chart.AppVersion .Values.image.tag -}}
{{- if .Values.image.registry -}}
{{ .Values.image.registry }}/{{ .Values.image.repository }}:{{ $tag }}
{{- else -}}
{{ .Values.image.repository }}:{{ $tag }}
{{- end -}}
{{- end }}

{{- define "spark-operator.controller.name" -}}
{{ include "spark-operator.fullname" . }}-controller
{{- end }}

{{- define "spark-operator.controller.serviceAccountName" -}}
{{- if .Values.controller.serviceAccount.create -}}
{{ default (include "spark-operator.controller.name" .) .Values.controller.serviceAccount.name }}
{{- else -}}
{{ default "default" .Values.controller.serviceAccount.name }}
{{- end -}}
{{- end }}

{{- define "spark-operator.webhook.name" -}}
{{ include "spark-operator.fullname" . }}-webhook
{{- end }}

{{- define "spark-operator.webhook.serviceAccountName" -}}
{{- if .Values.webhook.serviceAccount.create -}}
{{ default (include "spark-operator.webhook.name" .) .Values.webhook.serviceAccount.name }}
{{- else -}}
{{ default "default" .Values.webhook.serviceAccount.name }}
{{- end -}}
{{- end }}

{{/* Secret holding the webhook's certificate, made by the operator or by cert-manager. */}}
{{- define "spark-operator.webhook.secretName" -}}
{{ include "spark-operator.webhook.name" . }}-certs
{{- end }}

{{- define "spark-operator.spark.serviceAccountName" -}}
{{ default (printf "%s-spark" (include "spark-operator.fullname" .)) .Values.spark.serviceAccount.name }}
{{- end }}

{{/* "true" when the operator watches every namespace. */}}
{{- define "spark-operator.allNamespaces" -}}
{{- if or (not .Values.spark.jobNamespaces) (has "" .Values.spark.jobNamespaces) -}}
true
{{- end -}}
{{- end }}

{{/* The --namespaces flag, when the operator watches only some namespaces. */}}
{{- define "spark-operator.namespacesArg" -}}
{{- if not (include "spark-operator.allNamespaces" .) -}}
- --namespaces={{ join "," .Values.spark.jobNamespaces }}
{{- end -}}
{{- end }}

{{/*
Grants a ClusterRole of the chart's (.role) to a service account (.sa): in each job namespace
through a RoleBinding, or everywhere through a ClusterRoleBinding when every namespace is
watched.
*/}}
{{- define "spark-operator.bindInJobNamespaces" -}}
{{- $ctx := .ctx }}
{{- if include "spark-operator.allNamespaces" $ctx }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {{ .role }}
  labels:
    {{- include "spark-operator.labels" $ctx | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {{ .role }}
subjects:
  - kind: ServiceAccount
    name: {{ .sa }}
    namespace: {{ $ctx.Release.Namespace }}
{{- else }}
{{- range $ns := $ctx.Values.spark.jobNamespaces }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ $.role }}
  namespace: {{ $ns }}
  labels:
    {{- include "spark-operator.labels" $ctx | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {{ $.role }}
subjects:
  - kind: ServiceAccount
    name: {{ $.sa }}
    namespace: {{ $ctx.Release.Namespace }}
{{- end }}
{{- end }}
{{- end }}

{{/* Pod-level settings shared by both Deployments: include with the component's values. */}}
{{- define "spark-operator.podPlacement" -}}
{{- with .nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- with .podSecurityContext }}
securityContext:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* What every webhook of the two configurations shares: include with (dict "ctx" $ "path" ...). */}}
{{- define "spark-operator.webhook.common" -}}
{{- $name := include "spark-operator.webhook.name" .ctx -}}
clientConfig:
  service:
    name: {{ $name }}
    namespace: {{ .ctx.Release.Namespace }}
    port: {{ .ctx.Values.webhook.port }}
    path: {{ .path }}
failurePolicy: {{ .ctx.Values.webhook.failurePolicy }}
matchPolicy: Equivalent
sideEffects: None
timeoutSeconds: {{ .ctx.Values.webhook.timeoutSeconds }}
admissionReviewVersions: [v1]
{{- if include "spark-operator.allNamespaces" .ctx }}
namespaceSelector: {}
{{- else }}
namespaceSelector:
  matchExpressions:
    - key: kubernetes.io/metadata.name
      operator: In
      values:
        {{- toYaml .ctx.Values.spark.jobNamespaces | nindent 8 }}
{{- end }}
{{- end }}
