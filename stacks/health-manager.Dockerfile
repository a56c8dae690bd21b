# The heartbeat receiver and health check (stacks/health.ts): the same sources the Lambdas run.
FROM public.ecr.aws/docker/library/node:22-slim
WORKDIR /app
COPY package.json package-lock.json tsconfig.json ./
COPY packages ./packages
# --ignore-scripts: no DynamoDB Local download (that is npm start's, not the service's).
RUN npm ci --ignore-scripts --no-audit --no-fund && npm cache clean --force
ENV NODE_ENV=production
EXPOSE 5555/udp 8080/tcp
CMD ["node", "--import", "tsx", "packages/controller/src/health/main.ts"]
