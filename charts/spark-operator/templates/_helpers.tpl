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

{{- /*
The controller's image: in the spark-submit mode with no image.tag, the image with Spark and a
JVM, tagged <appVersion>-spark-submit (hack/operator-image.sh build --spark-submit makes it).
*/}}
{{- define "spark-operator.controller.image" -}}
{{- include "spark-operator.image" . }}
{{- if and (eq .Values.controller.submissionMode "spark-submit") (not .Values.image.tag) }}-spark-submit{{ end }}
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
  {{- include "spark-operator.metadataAnnotations" $.annotations }}
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
  {{- include "spark-operator.metadataAnnotations" $.annotations }}
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
{{- with .topologySpreadConstraints }}
topologySpreadConstraints:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- if not (kindIs "invalid" .hostUsers) }}
hostUsers: {{ .hostUsers }}
{{- end }}
{{- end }}

{{/* The log flags of a component (include with its values): logLevel is a glog verbosity, or
a Kubeflow level name, which the operator maps itself (--zap-log-level). */}}
{{- define "spark-operator.logArgs" -}}
{{- if kindIs "string" .logLevel }}
- --zap-log-level={{ .logLevel }}
{{- else }}
- -v={{ .logLevel }}
{{- end }}
{{- if eq .logEncoder "json" }}
- --zap-encoder=json
{{- end }}
{{- end }}

{{/* Kubeflow's feature gates and default time to live: --feature-gates from
controller.featureGates, --default-time-to-live-seconds where set (the operator applies it only
with the DefaultTimeToLive gate enabled, as Kubeflow's does). */}}
{{- define "spark-operator.kubeflowControllerArgs" -}}
{{- with .featureGates }}
- --feature-gates={{ range $i, $g := . }}{{ if $i }},{{ end }}{{ $g.name }}={{ $g.enabled }}{{ end }}
{{- end }}
{{- with .defaultTimeToLiveSeconds }}
- --default-time-to-live-seconds={{ . }}
{{- end }}
{{- with .labelSelectorFilter }}
- {{ printf "--label-selector-filter=%s" . | quote }}
{{- end }}
{{- end }}

{{/* The pod template's metadata of a component: include with (dict "ctx" $ "component"
"controller" "values" $c). labels and annotations are the Kubeflow chart's names of podLabels
and podAnnotations. */}}
{{- define "spark-operator.podMetadata" -}}
labels:
  {{- include "spark-operator.selectorLabels" (dict "ctx" .ctx "component" .component) | nindent 2 }}
  {{- with merge (dict) (.values.labels | default dict) (.values.podLabels | default dict) }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- with include "spark-operator.podAnnotations" (dict "ctx" .ctx "annotations" (merge (dict) (.values.annotations | default dict) (.values.podAnnotations | default dict))) }}
annotations:
  {{- . | nindent 2 }}
{{- end }}
{{- end }}

{{/* An annotations: block of a map under metadata (nothing for an empty one). */}}
{{- define "spark-operator.metadataAnnotations" -}}
{{- with . }}
  annotations:
    {{- toYaml . | nindent 4 }}
{{- end }}
{{- end }}

{{/* The volume mounts of a component's container: the user's (volumeMounts), and .own unless
a mount of the user's has its path. Include with (dict "values" $c "own" (list ...)). */}}
{{- define "spark-operator.volumeMounts" -}}
{{- $paths := list }}
{{- range .values.volumeMounts }}{{ $paths = append $paths .mountPath }}{{ end }}
{{- $mounts := .values.volumeMounts | default list }}
{{- range .own }}
{{- if not (has .mountPath $paths) }}{{ $mounts = append $mounts . }}{{ end }}
{{- end }}
{{- with $mounts }}
volumeMounts:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* The volumes of a component's pod: the user's (volumes), and each of .own that a mount
uses and the user's do not name. Include as volumeMounts. */}}
{{- define "spark-operator.volumes" -}}
{{- $names := list }}
{{- range .values.volumes }}{{ $names = append $names .name }}{{ end }}
{{- $used := list }}
{{- range .values.volumeMounts }}{{ $used = append $used .name }}{{ end }}
{{- range .ownMounts }}{{ $used = append $used .name }}{{ end }}
{{- $volumes := .values.volumes | default list }}
{{- range .own }}
{{- if and (not (has .name $names)) (has .name $used) }}{{ $volumes = append $volumes . }}{{ end }}
{{- end }}
{{- with $volumes }}
volumes:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* The refusals of Kubeflow chart values this chart accepts but cannot honour, each naming
the value and what to do instead. */}}
{{- define "spark-operator.kubeflowRefusals" -}}
{{- if .Values.hook.upgradeCrd }}
{{- fail "hook.upgradeCrd: this chart has no CRD upgrade hook; replace the CRDs before installing with: helm show crds charts/spark-operator | kubectl apply --server-side --force-conflicts -f -" }}
{{- end }}
{{- range .Values.controller.featureGates }}
{{- if and .enabled (ne .name "DefaultTimeToLive") }}
{{- fail (printf "controller.featureGates: %s is a Kubeflow operator feature this operator does not have (docs/migrating.md)" .name) }}
{{- end }}
{{- end }}
{{- with .Values.spark.jobNamespaceSelector }}
{{- fail "spark.jobNamespaceSelector: not supported by this chart; list the namespaces in spark.jobNamespaces" }}
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

{{/* A PodDisruptionBudget for a component's Deployment, with its podDisruptionBudget values:
include with (dict "ctx" $ "component" "controller" "values" $c). One replica could never be
evicted under it, so that is refused. */}}
{{- define "spark-operator.deploymentPDB" -}}
{{- if .values.podDisruptionBudget.enable }}
{{- if le (int .values.replicas) 1 }}
{{- fail (printf "%s.podDisruptionBudget.enable needs %s.replicas > 1: a single replica could never be evicted" .component .component) }}
{{- end }}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "spark-operator.fullname" .ctx }}-{{ .component }}
  namespace: {{ .ctx.Release.Namespace }}
  labels:
    {{- include "spark-operator.labels" .ctx | nindent 4 }}
    app.kubernetes.io/component: {{ .component }}
spec:
  selector:
    matchLabels:
      {{- include "spark-operator.selectorLabels" (dict "ctx" .ctx "component" .component) | nindent 6 }}
  minAvailable: {{ .values.podDisruptionBudget.minAvailable }}
{{- end }}
{{- end }}
