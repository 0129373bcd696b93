{{/* The batch scheduler flags, the same for the controller and the webhook (which refuses
applications naming a scheduler that is not enabled, and unknown gang queues). */}}
{{- define "spark-operator.batchSchedulerArgs" -}}
{{- $b := .Values.controller.batchScheduler -}}
{{- with $b.default }}
- --default-batch-scheduler={{ . }}
{{- end }}
{{- if $b.gang.enable }}
- --enable-gang-scheduler
- --gang-backfill={{ $b.gang.backfill }}
- --gang-preemption={{ $b.gang.preemption }}
- --gang-preemption-wait={{ $b.gang.preemptionWait }}
- --gang-reservation-timeout={{ $b.gang.reservationTimeout }}
- --gang-start-backlog={{ $b.gang.startBacklog }}
- --gang-enforcement={{ $b.gang.enforcement }}
{{- with $b.gang.placeholderImage }}
- --gang-placeholder-image={{ . }}
{{- end }}
{{- end }}
{{- end }}
